import * as t from 'typanion';
import { fail, ok, type Result } from '../../domain/failure.js';
import { isCleanAbsolutePath } from '../../domain/posix-path.js';
import { FLEX_PROFILE, type UpgraderConfig } from './upgrader-config.js';

const MIB = 1024 * 1024;
const isAbsolutePathText = t.cascade(t.isString(), [(value: unknown): value is string => typeof value === 'string' && isCleanAbsolutePath(value)]);
/** An absolute path naming a file (not the root directory). */
const isFilePathText = t.cascade(isAbsolutePathText, [(value: unknown): value is string => value !== '/']);
const isName = t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/)]);
const isUnitName = t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,120}\.service$/)]);
const integerIn = (low: number, high: number) => t.cascade(t.isNumber(), [t.isInteger(), t.isInInclusiveRange(low, high)]);
const optional = <T>(validator: t.StrictValidator<unknown, T>) => t.isOptional(validator);

/** Every key optional; unknown keys and wrong types are refused, naming the key. */
const isConfigFile = t.isObject({
  profile: optional(t.isEnum(['flex'] as const)),
  root: optional(isAbsolutePathText),
  agent: optional(
    t.isObject({
      name: optional(isName),
      mode: optional(t.isEnum(['self-hosted', 'sidecar'] as const)),
      args: optional(t.cascade(t.isArray(t.cascade(t.isString(), [t.hasMaxLength(4096)])), [t.hasMaxLength(64)])),
      member: optional(t.cascade(t.isString(), [t.matchesRegExp(/^[A-Za-z0-9][A-Za-z0-9_.{}-]{0,127}$/)])),
      allowScripts: optional(t.isBoolean()),
    }),
  ),
  paths: optional(
    t.isObject({
      entry: optional(isAbsolutePathText),
      slotDir: optional(isAbsolutePathText),
      record: optional(isAbsolutePathText),
      state: optional(isAbsolutePathText),
      lock: optional(isAbsolutePathText),
      daemonState: optional(isAbsolutePathText),
      unitDir: optional(isAbsolutePathText),
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
      kubeconfig: optional(t.isNullable(isAbsolutePathText)),
      operationMode: optional(t.isEnum(['auto', 'disable'] as const)),
    }),
  ),
});

/**
 * Parses configuration text strictly and fills every omitted key from the profile. Errors are
 * `E_CONFIG` and name the offending key.
 */
export function parseConfigText(text: string, source: string): Result<UpgraderConfig> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fail('E_CONFIG', `${source} is not valid JSON`);
  }
  return parseConfigValue(value, source);
}

export function parseConfigValue(value: unknown, source: string): Result<UpgraderConfig> {
  const errors: string[] = [];
  if (!isConfigFile(value, { errors })) {
    const first = errors[0] ?? 'invalid configuration';
    return fail('E_CONFIG', `${source}: ${first.replace(/^\./, '')}`);
  }
  const base = FLEX_PROFILE;
  return ok({
    profile: 'flex',
    root: value.root ?? base.root,
    agent: { ...base.agent, ...definedOnly(value.agent) },
    paths: { ...base.paths, ...definedOnly(value.paths) },
    service: { ...base.service, ...definedOnly(value.service) },
    health: { ...base.health, ...definedOnly(value.health) },
    artifact: { ...base.artifact, ...definedOnly(value.artifact) },
    container: { ...base.container, ...definedOnly(value.container) },
    cluster: { ...base.cluster, ...definedOnly(value.cluster) },
  });
}

/** Applies command-line overrides (currently only `--root`). */
export function withRoot(config: UpgraderConfig, root: string | undefined): Result<UpgraderConfig> {
  if (root === undefined) return ok(config);
  if (!isCleanAbsolutePath(root)) return fail('E_USAGE', '--root must be an absolute, clean path');
  return ok({ ...config, root });
}

function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
