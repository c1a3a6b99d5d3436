import { fail, ok, type Result } from '../../../domain/common/failure.js';
import { parseDuration } from '../../../domain/fleet/spec/time-text.js';
import type { WritePacing } from '../../../ports/fleet/controller-cluster.js';
import type { ControllerSettings } from './rollout-controller.js';

/** What `agent-upgrade controller` is told on its command line and by its pod's environment. */
export interface ControllerFlags {
  readonly kubeconfig: string | undefined;
  readonly kubeContext: string | undefined;
  readonly namespace: string | undefined;
  readonly eventsNamespace: string;
  readonly identity: string | undefined;
  readonly leaseName: string;
  readonly leaseDuration: string;
  readonly renewDeadline: string;
  readonly retryPeriod: string;
  readonly resync: string;
  readonly metricsAddress: string;
  readonly kubeApiQps: string;
  readonly kubeApiBurst: string;
}

export interface ControllerProcessSettings extends ControllerSettings {
  readonly kubeconfig: string | null;
  /** The kubeconfig context (`--context`); null: its current one. */
  readonly context: string | null;
  /** Where the Lease lives: the controller's own namespace. */
  readonly namespace: string;
  readonly eventsNamespace: string;
  readonly leaseName: string;
  /** `null`: no metrics listener. */
  readonly metrics: { readonly host: string; readonly port: number } | null;
  /** The token bucket every write to the API server waits for; `null`: no client-side limit. */
  readonly writePacing: WritePacing | null;
}

export const DEFAULT_NAMESPACE = 'agent-upgrade-system';
/** A quarter second: changes that arrive together (a wave's operations finishing) are planned together. */
export const RECONCILE_SETTLE_MS = 250;

/**
 * Reads the flags (the pod's POD_NAME and POD_NAMESPACE fill what they leave out), or says
 * precisely which one is wrong (E_USAGE). The lease timings must nest as client-go requires:
 * retry period < renew deadline < lease duration.
 */
export function controllerSettings(
  flags: ControllerFlags,
  env: Readonly<Record<string, string | undefined>>,
  hostName: string,
): Result<ControllerProcessSettings> {
  const durations: Record<string, number> = {};
  for (const [flag, text] of [
    ['--lease-duration', flags.leaseDuration],
    ['--renew-deadline', flags.renewDeadline],
    ['--retry-period', flags.retryPeriod],
    ['--resync', flags.resync],
  ] as const) {
    const ms = parseDuration(text);
    if (ms === null || ms <= 0)
      return usage(`${flag} must be a positive duration such as 15s or 5m (got "${text.slice(0, 40)}")`);
    durations[flag] = ms;
  }
  const leaseDurationMs = durations['--lease-duration'] as number;
  const renewDeadlineMs = durations['--renew-deadline'] as number;
  const retryPeriodMs = durations['--retry-period'] as number;
  if (!(retryPeriodMs < renewDeadlineMs && renewDeadlineMs < leaseDurationMs))
    return usage('the lease timings must nest: --retry-period < --renew-deadline < --lease-duration');
  const metrics = parseAddress(flags.metricsAddress);
  if (metrics === undefined)
    return usage(`--metrics-address must be HOST:PORT, :PORT or "off" (got "${flags.metricsAddress.slice(0, 60)}")`);
  const writePacing = parsePacing(flags.kubeApiQps, flags.kubeApiBurst);
  if (!writePacing.ok) return writePacing;
  const identity = flags.identity ?? env['POD_NAME'] ?? hostName;
  if (identity === '') return usage('--identity is empty and neither POD_NAME nor the host name gives one');
  return ok({
    kubeconfig: flags.kubeconfig ?? null,
    context: flags.kubeContext ?? null,
    namespace: flags.namespace ?? env['POD_NAMESPACE'] ?? DEFAULT_NAMESPACE,
    eventsNamespace: flags.eventsNamespace,
    leaseName: flags.leaseName,
    metrics,
    writePacing: writePacing.value,
    leader: { identity, leaseDurationMs, renewDeadlineMs, retryPeriodMs },
    loop: {
      resyncMs: durations['--resync'] as number,
      retryDelayMs: 1_000,
      retryDelayMaxMs: 300_000,
      settleMs: RECONCILE_SETTLE_MS,
    },
  });
}

/** Beyond these a flag is a typo, not a setting: the API server's own limits are far lower. */
const QPS_MAX = 100_000;
const BURST_MAX = 100_000;

/**
 * `--kube-api-qps` and `--kube-api-burst`, as kube-controller-manager reads them: QPS a decimal
 * number, burst a whole number of at least 1. A QPS of 0 or less turns the client-side limit off
 * (client-go turns it off for a negative QPS and reads 0 as its default of 5; a flag that quietly
 * means 5 would be a trap, so here both mean "no limit").
 */
function parsePacing(qpsText: string, burstText: string): Result<WritePacing | null> {
  const qps = /^-?\d{1,9}(\.\d{1,9})?$/.test(qpsText) ? Number(qpsText) : Number.NaN;
  if (!Number.isFinite(qps) || qps > QPS_MAX)
    return usage(`--kube-api-qps must be a number up to ${QPS_MAX}, 0 for no limit (got "${qpsText.slice(0, 40)}")`);
  const burst = /^\d{1,9}$/.test(burstText) ? Number(burstText) : Number.NaN;
  if (!(burst >= 1 && burst <= BURST_MAX))
    return usage(`--kube-api-burst must be a whole number from 1 to ${BURST_MAX} (got "${burstText.slice(0, 40)}")`);
  return ok(qps <= 0 ? null : { qps, burst });
}

/** `HOST:PORT`, `:PORT` (every interface) or `off`; `undefined` when it is neither. */
function parseAddress(text: string): ControllerProcessSettings['metrics'] | undefined {
  if (text === 'off') return null;
  const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]*):(\d{1,5})$/.exec(text);
  if (match === null) return undefined;
  const port = Number(match[2]);
  if (port > 65_535) return undefined;
  const host = (match[1] ?? '').replace(/^\[|\]$/g, '');
  return { host: host === '' ? '0.0.0.0' : host, port };
}

function usage(message: string): Result<never> {
  return fail('E_USAGE', message);
}
