import type { ArtifactRequest, ArtifactSource, ArtifactStream } from '../../../ports/common/artifact-source.js';
import type { AxiosSourceOptions } from './axios-artifact-source.js';

/**
 * Loads axios only when a download actually starts, so commands that never download (version,
 * status, --help) do not pay for importing it.
 */
export class LazyArtifactSource implements ArtifactSource {
  private loaded: Promise<ArtifactSource> | null = null;

  constructor(private readonly options: AxiosSourceOptions = {}) {}

  async open(request: ArtifactRequest): Promise<ArtifactStream> {
    this.loaded ??= import('./axios-artifact-source.js').then(
      ({ AxiosArtifactSource }) => new AxiosArtifactSource(this.options),
    );
    return (await this.loaded).open(request);
  }
}
