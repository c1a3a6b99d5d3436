import { parseMarker, MARKER_TEXT_MAX_BYTES, serializeMarker, type ActivationMarker } from '../../domain/activation-marker.js';
import { fail, ok, type Result } from '../../domain/failure.js';
import { dirnamePath } from '../../domain/posix-path.js';
import { RECORD_MODE, STATE_DIRECTORY_MODE } from '../../domain/slot-layout.js';
import type { FileSystem } from '../../ports/file-system.js';

/** The direct path's activation marker on disk: atomic, durable, 0600, read strictly. */
export class MarkerStore {
  constructor(
    private readonly fs: FileSystem,
    private readonly path: string,
  ) {}

  async read(): Promise<Result<ActivationMarker | null>> {
    const bytes = await this.fs.readFile(this.path, MARKER_TEXT_MAX_BYTES);
    if (bytes === null) return ok(null);
    const parsed = parseMarker(new TextDecoder().decode(bytes));
    return parsed.ok ? parsed : fail('E_RECORD', `the activation marker ${this.path} is invalid: ${parsed.failure.message}`);
  }

  async write(marker: ActivationMarker): Promise<void> {
    await this.fs.ensureDirectory(dirnamePath(this.path), STATE_DIRECTORY_MODE);
    await this.fs.writeFileAtomic(this.path, new TextEncoder().encode(serializeMarker(marker)), { mode: RECORD_MODE });
  }

  async delete(): Promise<void> {
    await this.fs.remove(this.path);
  }
}
