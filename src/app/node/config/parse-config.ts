import * as t from 'typanion';
import { MIB } from '../../../domain/node/artifact/byte-units.js';
import { fail, ok, type Result } from '../../../domain/common/failure.js';
import { isCleanAbsolutePath } from '../../../domain/node/layout/posix-path.js';
import { defaultTrustCacheDir } from '../../../domain/common/trust/trust-settings.js';
import {
  hasPlainText,
  integerIn,
  isAbsolutePathText,
  isFilePathText,
  type ConfigProblem,
} from '../../common/config/config-checks.js';
import { configJson, isPlainText } from '../../common/config/config-text.js';
import { isTrustSection, trustSettingsOf } from '../../common/config/trust-section.js';
import { findRuleProblem, systemdPathProblem } from './config-rules.js';
import { isProbeSection, probeSettingsOf } from './probe-section.js';
import { profileFor } from './profiles.js';
import { PROFILES, type UpgraderConfig } from './upgrader-config.js';

/** Error texts quote the offending value; a long one would bury the key it names. */
const CONFIG_MESSAGE_MAX_CHARS = 400;

const isText = t.cascade(t.isString(), [hasPlainText]);
const isName = t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/)]);
/** The agent's name becomes slot, link and script names: the layout's own rule. */
const isAgentName = t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)]);
const isUnitName = t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,120}\.service$/)]);
const optional = <T>(validator: t.StrictValidator<unknown, T>) => t.isOptional(validator);

/** Every key optional; unknown keys and wrong types are refused, naming the key. */
const isConfigFile = t.isObject({
  profile: optional(t.isEnum(PROFILES)),
  root: optional(isAbsolutePathText),
  agent: optional(
    t.isObject({
      name: optional(isAgentName),
      mode: optional(t.isEnum(['self-hosted', 'sidecar'] as const)),
      args: optional(t.cascade(t.isArray(t.cascade(isText, [t.hasMaxLength(4096)])), [t.hasMaxLength(64)])),
      member: optional(t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.{}-]{0,127}$/)])),
      allowScripts: optional(t.isBoolean()),
    }),
  ),
  paths: optional(
    t.isObject({
      entry: optional(isFilePathText),
      slotDir: optional(isFilePathText),
      record: optional(isFilePathText),
      state: optional(isFilePathText),
      lock: optional(isFilePathText),
      daemonState: optional(isFilePathText),
      unitDir: optional(isFilePathText),
    }),
  ),
  service: optional(
    t.isObject({
      manager: optional(t.isEnum(['systemd', 'supervisor', 'none'] as const)),
      unit: optional(isUnitName),
      recoveryUnit: optional(isUnitName),
      restartSec: optional(integerIn(0, 3600)),
      startLimitBurst: optional(integerIn(1, 100)),
      startLimitIntervalSec: optional(integerIn(1, 86_400)),
      supervisorSocket: optional(isFilePathText),
    }),
  ),
  health: optional(
    t.isObject({
      timeoutMs: optional(integerIn(100, 3_600_000)),
      stableMs: optional(integerIn(0, 600_000)),
      pollMs: optional(integerIn(10, 60_000)),
      // At most a day (WATCH_WINDOW_MAX_MS): a window is a trial, not a second release cycle.
      watchMs: optional(integerIn(0, 86_400_000)),
      probe: optional(t.isNullable(isProbeSection)),
    }),
  ),
  artifact: optional(
    t.isObject({
      maxArchiveBytes: optional(integerIn(1, 1024 * MIB)),
      maxBinaryBytes: optional(integerIn(1, 1024 * MIB)),
      requireDigest: optional(t.isBoolean()),
      allowHttp: optional(t.isBoolean()),
      timeoutMs: optional(integerIn(1_000, 24 * 3_600_000)),
      idleTimeoutMs: optional(integerIn(100, 3_600_000)),
    }),
  ),
  container: optional(
    t.isObject({
      manager: optional(t.isEnum(['nspawn', 'none'] as const)),
      machinesDir: optional(isAbsolutePathText),
      machines: optional(t.isArray(t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/)]))),
      binaryPath: optional(isFilePathText),
    }),
  ),
  cluster: optional(
    t.isObject({
      manager: optional(t.isEnum(['kubernetes', 'none'] as const)),
      machineName: optional(t.isNullable(isName)),
      kubeconfig: optional(t.isNullable(isFilePathText)),
      operationMode: optional(t.isEnum(['auto', 'disable'] as const)),
    }),
  ),
  trust: optional(t.isNullable(isTrustSection)),
});

export type ConfigCheck =
  { readonly ok: true; readonly config: UpgraderConfig } | { readonly ok: false; readonly problem: ConfigProblem };

/**
 * Parses configuration text strictly and fills every omitted key from the profile. Errors are
 * `E_CONFIG` and name the offending keys.
 */
export function parseConfigText(text: string, source: string): Result<UpgraderConfig> {
  return asResult(checkConfigText(text), source);
}

export function parseConfigValue(value: unknown, source: string): Result<UpgraderConfig> {
  return asResult(checkConfigValue(value), source);
}

/** The structured form of `parseConfigText`: on refusal, the keys to change and why. */
export function checkConfigText(text: string): ConfigCheck {
  const json = configJson(text);
  return json.ok ? checkConfigValue(json.value) : refused([], json.problem);
}

export function checkConfigValue(value: unknown): ConfigCheck {
  const errors: string[] = [];
  if (!isConfigFile(value, { errors })) return schemaRefusal(errors[0] ?? '.: invalid configuration');
  const base = profileFor(value.profile, value.agent?.name);
  // The probe section is converted on its own (its URL becomes a RedactedUrl); null means none.
  const { probe, ...healthKeys } = value.health ?? {};
  let config: UpgraderConfig = {
    profile: base.profile,
    root: value.root ?? base.root,
    agent: { ...base.agent, ...definedOnly(value.agent) },
    paths: { ...base.paths, ...definedOnly(value.paths) },
    service: { ...base.service, ...definedOnly(value.service) },
    health: { ...base.health, ...definedOnly(healthKeys) },
    artifact: { ...base.artifact, ...definedOnly(value.artifact) },
    container: { ...base.container, ...definedOnly(value.container) },
    cluster: { ...base.cluster, ...definedOnly(value.cluster) },
    trust: null,
  };
  if (value.trust !== undefined && value.trust !== null)
    config = { ...config, trust: trustSettingsOf(value.trust, defaultTrustCacheDir(config.paths.state)) };
  if (probe !== undefined && probe !== null) {
    const probed = probeSettingsOf(probe);
    if (!probed.ok) return { ok: false, problem: probed.problem };
    config = { ...config, health: { ...config.health, probe: probed.settings } };
  }
  const problem = findRuleProblem(config);
  return problem === null ? { ok: true, config } : { ok: false, problem };
}

/** typanion reports `.agent.args[2]: why`; the key is the part before the first ": ". */
function schemaRefusal(error: string): ConfigCheck {
  const split = error.indexOf(': ');
  const key = (split < 0 ? '.' : error.slice(0, split)).replace(/^\./, '');
  const why = split < 0 ? error : error.slice(split + 2);
  return refused(
    [key === '' ? '(the whole file)' : key],
    why.length > CONFIG_MESSAGE_MAX_CHARS ? `${why.slice(0, CONFIG_MESSAGE_MAX_CHARS)}…` : why,
  );
}

function refused(keys: readonly string[], problem: string): ConfigCheck {
  return { ok: false, problem: { keys, problem } };
}

function asResult(check: ConfigCheck, source: string): Result<UpgraderConfig> {
  if (check.ok) return ok(check.config);
  const { keys, problem } = check.problem;
  return fail('E_CONFIG', keys.length === 0 ? `${source}: ${problem}` : `${source}: ${keys.join(', ')}: ${problem}`);
}

/** Applies command-line overrides (currently only `--root`). */
export function withRoot(config: UpgraderConfig, root: string | undefined): Result<UpgraderConfig> {
  if (root === undefined) return ok(config);
  if (!isCleanAbsolutePath(root) || !isPlainText(root))
    return fail('E_USAGE', '--root must be an absolute, clean path without control characters');
  const rerooted = { ...config, root };
  // The file's paths were checked under its own root; under this one they must still be usable.
  const problem = systemdPathProblem(rerooted);
  if (problem !== null) return fail('E_USAGE', `--root: ${problem.problem}`);
  return ok(rerooted);
}

function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
