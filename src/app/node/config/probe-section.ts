import * as t from 'typanion';
import { isCleanAbsolutePath } from '../../../domain/common/clean-path.js';
import {
  parseProbeUrl,
  PROBE_DEFAULTS,
  probePathProblem,
  type ProbeSettings,
  type ProbeTarget,
} from '../../../domain/node/health/probe-target.js';
import { invariant } from '../../../domain/common/invariant.js';
import { hasPlainText, integerIn, isFilePathText, type ConfigProblem } from '../../common/config/config-checks.js';

/** The most arguments an exec probe may have, and the longest one (as `agent.args`). */
const PROBE_ARGUMENTS_MAX = 64;
const PROBE_ARGUMENT_MAX_CHARS = 4096;

/** A string check whose refusal is the domain's own reason, reported under the key. */
const checkedBy = (problemOf: (value: string) => string | null) =>
  t.makeValidator<string, string>({
    test: (value, state): value is string => {
      const problem = problemOf(value);
      if (problem === null) return true;
      state?.errors?.push(`${state.p ?? '.'}: ${problem}`);
      return false;
    },
  });

const isProbeUrlText = t.cascade(t.isString(), [
  checkedBy((value) => {
    const parsed = parseProbeUrl(value);
    return parsed.ok ? null : parsed.failure.message;
  }),
]);
const isProbePathText = t.cascade(t.isString(), [checkedBy(probePathProblem)]);
const isProbeArgument = t.cascade(t.isString(), [hasPlainText, t.hasMaxLength(PROBE_ARGUMENT_MAX_CHARS)]);

/**
 * `health.probe` (docs/configuration.md#health): exactly one of `exec` or `http`, and the
 * Kubernetes-named timings. Every key but the target is optional.
 */
export const isProbeSection = t.isObject({
  exec: t.isOptional(
    t.isObject({
      command: t.cascade(t.isArray(isProbeArgument), [t.hasMinLength(1), t.hasMaxLength(PROBE_ARGUMENTS_MAX)]),
    }),
  ),
  http: t.isOptional(
    t.isObject({
      url: t.isOptional(isProbeUrlText),
      socket: t.isOptional(isFilePathText),
      path: t.isOptional(isProbePathText),
    }),
  ),
  periodMs: t.isOptional(integerIn(100, 600_000)),
  timeoutMs: t.isOptional(integerIn(100, 600_000)),
  successThreshold: t.isOptional(integerIn(1, 100)),
  failureThreshold: t.isOptional(integerIn(1, 100)),
});

export type ProbeSection = t.InferType<typeof isProbeSection>;

export type ProbeCheck =
  { readonly ok: true; readonly settings: ProbeSettings } | { readonly ok: false; readonly problem: ConfigProblem };

/** The settings a schema-checked section gives, or the keys that cannot go together. */
export function probeSettingsOf(section: ProbeSection): ProbeCheck {
  const target = probeTargetOf(section);
  if ('problem' in target) return { ok: false, problem: target };
  return {
    ok: true,
    settings: {
      target,
      periodMs: section.periodMs ?? PROBE_DEFAULTS.periodMs,
      timeoutMs: section.timeoutMs ?? PROBE_DEFAULTS.timeoutMs,
      successThreshold: section.successThreshold ?? PROBE_DEFAULTS.successThreshold,
      failureThreshold: section.failureThreshold ?? PROBE_DEFAULTS.failureThreshold,
    },
  };
}

function probeTargetOf({ exec, http }: ProbeSection): ProbeTarget | ConfigProblem {
  if ((exec === undefined) === (http === undefined))
    return { keys: ['health.probe.exec', 'health.probe.http'], problem: 'exactly one of the two must be given' };
  if (exec !== undefined) {
    // Resolved through no PATH: the upgrader runs as root, and the probe names what it runs.
    const program = exec.command[0] ?? '';
    if (!isCleanAbsolutePath(program))
      return { keys: ['health.probe.exec.command[0]'], problem: 'must be an absolute, clean path to the program' };
    return { kind: 'exec', command: exec.command };
  }
  invariant(http !== undefined, 'one of exec and http is given');
  if (http.url !== undefined) {
    if (http.socket !== undefined || http.path !== undefined)
      return {
        keys: [
          'health.probe.http.url',
          http.socket === undefined ? 'health.probe.http.path' : 'health.probe.http.socket',
        ],
        problem: 'a URL names its host and path: give either url, or socket (with path)',
      };
    const url = parseProbeUrl(http.url);
    invariant(url.ok, 'the schema checked the probe URL');
    return { kind: 'http', url: url.value };
  }
  if (http.socket === undefined)
    return { keys: ['health.probe.http.url', 'health.probe.http.socket'], problem: 'one of the two must be given' };
  return { kind: 'unix-http', socket: http.socket, path: http.path ?? '/' };
}

/**
 * With a probe, an agent needs time to become stable and then to pass the probe: the health
 * timeout must hold the stable interval, one poll, and `successThreshold` attempts one period
 * apart, the last allowed its whole timeout. Otherwise every activation would roll back.
 */
export function probeTimingProblem(health: {
  readonly timeoutMs: number;
  readonly stableMs: number;
  readonly pollMs: number;
  readonly probe?: ProbeSettings;
}): ConfigProblem | null {
  const { probe } = health;
  if (probe === undefined) return null;
  const neededMs = health.stableMs + health.pollMs + (probe.successThreshold - 1) * probe.periodMs + probe.timeoutMs;
  if (health.timeoutMs >= neededMs) return null;
  return {
    keys: ['health.timeoutMs', 'health.probe.periodMs', 'health.probe.timeoutMs', 'health.probe.successThreshold'],
    problem: `the health timeout (${health.timeoutMs} ms) must be at least the stable interval, one poll, and successThreshold probe attempts (${neededMs} ms), or no activation can prove healthy`,
  };
}
