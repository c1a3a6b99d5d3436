import { fail, ok, type Result } from '../../../domain/common/failure.js';
import { isCleanAbsolutePath, rerootPath } from '../../../domain/node/layout/posix-path.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import { isPlainText } from '../../common/config/config-text.js';
import { parseConfigText, parseConfigValue, withRoot } from './parse-config.js';
import { CONFIG_TEXT_MAX_BYTES, DEFAULT_CONFIG_PATH, type UpgraderConfig } from './upgrader-config.js';

export interface ConfigSource {
  /** `--config FILE`: must exist. */
  readonly path?: string;
  /** `--root DIR`: re-roots every host path; the default config file is looked up under it. */
  readonly root?: string;
}

/**
 * Loads the configuration: `--config FILE` when given, otherwise the default file under the
 * root when it exists, otherwise the built-in `flex` profile. `--root` wins over the file's root.
 */
export async function loadConfig(fs: FileSystem, source: ConfigSource): Promise<Result<UpgraderConfig>> {
  if (source.root !== undefined && (!isCleanAbsolutePath(source.root) || !isPlainText(source.root))) {
    return fail('E_USAGE', '--root must be an absolute, clean path without control characters');
  }
  // The path is passed on to the recovery script and the supervisor's hook: it must render as is.
  if (source.path !== undefined && (!source.path.startsWith('/') || !isPlainText(source.path))) {
    return fail('E_USAGE', '--config must be an absolute path without control characters');
  }
  const path = source.path ?? rerootPath(source.root ?? '/', DEFAULT_CONFIG_PATH);
  const bytes = await readConfigBytes(fs, path);
  if (!bytes.ok) return bytes;
  if (bytes.value === null) {
    if (source.path !== undefined) return fail('E_CONFIG', `the configuration file ${path} does not exist`);
    const profile = parseConfigValue({}, 'the built-in profile');
    return profile.ok ? withRoot(profile.value, source.root) : profile;
  }
  const text = decodeUtf8(bytes.value);
  if (text === null) return fail('E_CONFIG', `the configuration file ${path} is not UTF-8 text`);
  const parsed = parseConfigText(text, path);
  return parsed.ok ? withRoot(parsed.value, source.root) : parsed;
}

/** Strict: a lenient decoder would turn invalid bytes into U+FFFD and change the values silently. */
function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

async function readConfigBytes(fs: FileSystem, path: string): Promise<Result<Uint8Array | null>> {
  try {
    return ok(await fs.readFile(path, CONFIG_TEXT_MAX_BYTES));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return fail(
      'E_CONFIG',
      `the configuration file ${path} cannot be read (${typeof code === 'string' ? code : 'error'})`,
    );
  }
}
