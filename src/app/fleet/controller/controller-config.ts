import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import * as t from 'typanion';
import { isPathInside } from '../../../domain/common/clean-path.js';
import { fail, ok, type Result } from '../../../domain/common/failure.js';
import type { TufTrustSettings } from '../../../domain/common/trust/trust-settings.js';
import { integerIn, type ConfigProblem } from '../../common/config/config-checks.js';
import { configJson, isPlainText } from '../../common/config/config-text.js';
import { isTrustSection, plainHttpTrustProblem, trustSettingsOf } from '../../common/config/trust-section.js';

/**
 * `agent-upgrade controller --config FILE` (docs/configuration.md#the-controllers-configuration):
 * the node's `trust` section, so the controller verifies every AgentRelease against the same
 * signed metadata the nodes will, and the limits of its metadata requests.
 */
export interface ControllerConfig {
  readonly trust: TufTrustSettings | null;
  readonly artifact: {
    /** Whether plain-HTTP repository URLs are accepted (as on the node). */
    readonly allowHttp: boolean;
    /** Each metadata request's limits: the whole request, and the longest silence within it. */
    readonly timeoutMs: number;
    readonly idleTimeoutMs: number;
  };
}

/** Where the controller keeps the metadata it verified, when `trust.cacheDir` is not set. */
export const CONTROLLER_TRUST_CACHE_DIR = '/var/lib/agent-upgrade-controller/trust';

/**
 * Without `--config`: nothing is verified. Metadata files are small, and a reconcile waits for
 * them, so the request limits are far shorter than a node's for a release archive.
 */
export const CONTROLLER_CONFIG_DEFAULTS: ControllerConfig = {
  trust: null,
  artifact: { allowHttp: true, timeoutMs: 30_000, idleTimeoutMs: 10_000 },
};

const CONTROLLER_CONFIG_MAX_BYTES = 64 * 1024;
/** Error texts quote the offending value; a long one would bury the key it names. */
const CONFIG_MESSAGE_MAX_CHARS = 400;

const isControllerConfigFile = t.isObject({
  trust: t.isOptional(t.isNullable(isTrustSection)),
  artifact: t.isOptional(
    t.isObject({
      allowHttp: t.isOptional(t.isBoolean()),
      timeoutMs: t.isOptional(integerIn(1_000, 600_000)),
      idleTimeoutMs: t.isOptional(integerIn(100, 600_000)),
    }),
  ),
});

export type ControllerConfigCheck =
  { readonly ok: true; readonly config: ControllerConfig } | { readonly ok: false; readonly problem: ConfigProblem };

/** Parses the file's text strictly; a refusal is E_CONFIG naming the keys, as the node's configuration. */
export function parseControllerConfigText(text: string, source: string): Result<ControllerConfig> {
  const check = checkControllerConfigText(text);
  if (check.ok) return ok(check.config);
  const { keys, problem } = check.problem;
  return fail('E_CONFIG', keys.length === 0 ? `${source}: ${problem}` : `${source}: ${keys.join(', ')}: ${problem}`);
}

/** The structured form of `parseControllerConfigText`: on refusal, the keys to change and why. */
export function checkControllerConfigText(text: string): ControllerConfigCheck {
  const json = configJson(text);
  if (!json.ok) return refused([], json.problem);
  const { value } = json;
  const errors: string[] = [];
  if (!isControllerConfigFile(value, { errors })) {
    // typanion reports `.trust.rootFile: why`; the key is the part before the first ": ".
    const error = errors[0] ?? '.: invalid configuration';
    const split = error.indexOf(': ');
    const key = split < 0 ? '' : error.slice(0, split).replace(/^\./, '');
    const why = split < 0 ? error : error.slice(split + 2);
    return refused([key === '' ? '(the whole file)' : key], why.slice(0, CONFIG_MESSAGE_MAX_CHARS));
  }
  const defaults = CONTROLLER_CONFIG_DEFAULTS.artifact;
  const section = value.artifact ?? {};
  const trust = value.trust ?? null;
  const config: ControllerConfig = {
    trust: trust === null ? null : trustSettingsOf(trust, CONTROLLER_TRUST_CACHE_DIR),
    artifact: {
      allowHttp: section.allowHttp ?? defaults.allowHttp,
      timeoutMs: section.timeoutMs ?? defaults.timeoutMs,
      idleTimeoutMs: section.idleTimeoutMs ?? defaults.idleTimeoutMs,
    },
  };
  const problem = plainHttpTrustProblem(config.trust, config.artifact.allowHttp) ?? trustPathProblem(config.trust);
  return problem === null ? { ok: true, config } : { ok: false, problem };
}

/**
 * Reads `--config FILE` (`undefined`: the defaults). The path must be absolute and plain
 * (E_USAGE); a file that is missing, not a regular file, too large, not UTF-8 or not valid is
 * E_CONFIG. Opened without blocking, so a FIFO in its place is refused instead of waited on.
 */
export async function loadControllerConfig(path: string | undefined): Promise<Result<ControllerConfig>> {
  if (path === undefined) return ok(CONTROLLER_CONFIG_DEFAULTS);
  if (!path.startsWith('/') || !isPlainText(path))
    return fail('E_USAGE', '--config must be an absolute path without control characters');
  const bytes = await readSmallFile(path);
  if (!bytes.ok) return bytes;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.value);
  } catch {
    return fail('E_CONFIG', `the configuration file ${path} is not UTF-8 text`);
  }
  return parseControllerConfigText(text, path);
}

async function readSmallFile(path: string): Promise<Result<Uint8Array>> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ENOENT') return fail('E_CONFIG', `the configuration file ${path} does not exist`);
    return fail(
      'E_CONFIG',
      `the configuration file ${path} cannot be read (${typeof code === 'string' ? code : 'error'})`,
    );
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return fail('E_CONFIG', `the configuration file ${path} is not a regular file`);
    if (stat.size > CONTROLLER_CONFIG_MAX_BYTES)
      return fail('E_CONFIG', `the configuration file ${path} is larger than ${CONTROLLER_CONFIG_MAX_BYTES} bytes`);
    return ok(new Uint8Array(await handle.readFile()));
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return fail(
      'E_CONFIG',
      `the configuration file ${path} cannot be read (${typeof code === 'string' ? code : 'error'})`,
    );
  } finally {
    await handle.close();
  }
}

/** The verified metadata is written under cacheDir: the installed root must lie elsewhere. */
function trustPathProblem(trust: TufTrustSettings | null): ConfigProblem | null {
  if (trust === null) return null;
  if (!isPathInside(trust.rootFile, trust.cacheDir) && !isPathInside(trust.cacheDir, trust.rootFile)) return null;
  return {
    keys: ['trust.rootFile', 'trust.cacheDir'],
    problem: `${trust.rootFile} and ${trust.cacheDir} must not contain each other: the cache would overwrite the root`,
  };
}

function refused(keys: readonly string[], problem: string): ControllerConfigCheck {
  return { ok: false, problem: { keys, problem } };
}
