import type { AgentRolloutStatus, RolloutCounts } from '../../../domain/fleet/status/rollout-status.js';
import { ROLLOUT_PHASES } from '../../../domain/fleet/status/rollout-status.js';
import type { ApiRequestSample, ControllerMetrics, TrustRoleExpiry } from '../../../ports/fleet/controller-metrics.js';
import { Counter, Gauge, Histogram, Registry } from './prom-client-classes.js';

/** The `state` label of `agent_upgrade_rollout_machines`, and where each value comes from. */
const MACHINE_STATES: readonly (readonly [state: string, count: (counts: RolloutCounts) => number])[] = [
  ['pending', (counts) => counts.pending],
  ['in_flight', (counts) => counts.inFlight],
  ['succeeded', (counts) => counts.succeeded],
  ['failed', (counts) => counts.failed],
  ['timed_out', (counts) => counts.timedOut],
  ['lost', (counts) => counts.lost],
  ['rolled_back', (counts) => counts.rolledBack],
  ['excluded_opted_out', (counts) => counts.excluded.optedOut],
  ['excluded_already_at_target', (counts) => counts.excluded.alreadyAtTarget],
  ['excluded_conflict', (counts) => counts.excluded.conflict],
  ['excluded_vanished', (counts) => counts.excluded.vanished],
  ['excluded_no_artifact', (counts) => counts.excluded.noArtifact],
];

/** From a fast watch-driven reconcile (about 1 ms) to a slow one against a loaded API server (10 s). */
const RECONCILE_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** The `code` label of a request that got no answer. */
const NO_ANSWER_CODE = 'none';

export interface PrometheusMetricsOptions {
  /**
   * Told about what a metric method swallowed (a malformed status, say), so the caller can log
   * it; metric methods themselves never throw.
   */
  readonly onError?: (error: unknown, method: keyof ControllerMetrics) => void;
}

/** The label sets this adapter created for one rollout beyond the fixed states and phases, so they can be removed. */
interface RolloutSeries {
  readonly failureReasons: Set<string>;
  readonly haltReasons: Set<string>;
}

/**
 * The controller's metrics over a prom-client Registry of its own: never the global one, so two
 * instances (two tests, or a library user's own metrics) never share or clash over series.
 */
export class PrometheusMetrics implements ControllerMetrics {
  private readonly registry = new Registry();
  private readonly machines: Gauge<'rollout' | 'state'>;
  private readonly failures: Gauge<'rollout' | 'reason'>;
  private readonly phase: Gauge<'rollout' | 'phase'>;
  private readonly halts: Counter<'rollout' | 'reason'>;
  private readonly reconcileDuration: Histogram<'outcome'>;
  private readonly apiRequests: Counter<'verb' | 'resource' | 'code'>;
  private readonly leader: Gauge;
  private readonly trustExpiry: Gauge<'role'>;
  private readonly trustExpiring: Gauge<'role'>;
  private readonly series = new Map<string, RolloutSeries>();
  private readonly onError: NonNullable<PrometheusMetricsOptions['onError']>;

  constructor(options: PrometheusMetricsOptions = {}) {
    this.onError = options.onError ?? (() => undefined);
    const registers = [this.registry];
    this.machines = new Gauge({
      name: 'agent_upgrade_rollout_machines',
      help: 'Machines of a rollout by state, from its last status.',
      labelNames: ['rollout', 'state'],
      registers,
    });
    this.failures = new Gauge({
      name: 'agent_upgrade_rollout_failures',
      help: 'Failed operations of a rollout by reason, from its last status.',
      labelNames: ['rollout', 'reason'],
      registers,
    });
    this.phase = new Gauge({
      name: 'agent_upgrade_rollout_phase',
      help: 'The phase of a rollout: 1 for the current phase, 0 for the others.',
      labelNames: ['rollout', 'phase'],
      registers,
    });
    this.halts = new Counter({
      name: 'agent_upgrade_rollout_halts_total',
      help: 'Halts of a rollout by reason.',
      labelNames: ['rollout', 'reason'],
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'agent_upgrade_reconcile_duration_seconds',
      help: 'Duration of one reconcile of one rollout, from the snapshot to the last action.',
      labelNames: ['outcome'],
      buckets: RECONCILE_BUCKETS_SECONDS,
      registers,
    });
    this.apiRequests = new Counter({
      name: 'agent_upgrade_api_requests_total',
      help: 'Requests to the Kubernetes API by verb, resource and HTTP status ("none" when no answer came).',
      labelNames: ['verb', 'resource', 'code'],
      registers,
    });
    this.leader = new Gauge({
      name: 'agent_upgrade_controller_leader',
      help: 'Whether this replica holds the leader Lease (1) or not (0).',
      registers,
    });
    this.trustExpiry = new Gauge({
      name: 'agent_upgrade_trust_metadata_expiry_timestamp_seconds',
      help: 'When each role of the trusted release metadata expires, as last verified (signed releases).',
      labelNames: ['role'],
      registers,
    });
    this.trustExpiring = new Gauge({
      name: 'agent_upgrade_trust_metadata_expiring',
      help: 'Whether a role of the trusted release metadata expires within 7 days, or has (1), or not (0).',
      labelNames: ['role'],
      registers,
    });
  }

  /** The Content-Type of what render() returns (the Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text of every series. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  rolloutObserved(name: string, status: AgentRolloutStatus): void {
    this.guard('rolloutObserved', () => {
      // Everything is read and checked before anything is set, so a malformed status leaves the
      // rollout's previous series whole instead of half updated.
      const machineCounts = MACHINE_STATES.map(([state, count]) => [state, finiteCount(count(status.counts))] as const);
      const failureCounts = Object.entries(status.failures.byReason).map(
        ([reason, count]) => [reason, finiteCount(count)] as const,
      );
      const phase = status.phase;
      const series = this.seriesOf(name);
      for (const [state, count] of machineCounts) this.machines.set({ rollout: name, state }, count);
      for (const candidate of ROLLOUT_PHASES) {
        this.phase.set({ rollout: name, phase: candidate }, candidate === phase ? 1 : 0);
      }
      const reported = new Set(failureCounts.map(([reason]) => reason));
      for (const reason of series.failureReasons) {
        if (!reported.has(reason)) this.failures.remove({ rollout: name, reason });
      }
      for (const [reason, count] of failureCounts) this.failures.set({ rollout: name, reason }, count);
      series.failureReasons.clear();
      for (const reason of reported) series.failureReasons.add(reason);
    });
  }

  rolloutForgotten(name: string): void {
    this.guard('rolloutForgotten', () => {
      for (const [state] of MACHINE_STATES) this.machines.remove({ rollout: name, state });
      for (const phase of ROLLOUT_PHASES) this.phase.remove({ rollout: name, phase });
      const series = this.series.get(name);
      for (const reason of series?.failureReasons ?? []) this.failures.remove({ rollout: name, reason });
      for (const reason of series?.haltReasons ?? []) this.halts.remove({ rollout: name, reason });
      this.series.delete(name);
    });
  }

  halted(name: string, reason: string): void {
    this.guard('halted', () => {
      this.halts.inc({ rollout: name, reason });
      this.seriesOf(name).haltReasons.add(reason);
    });
  }

  reconciled(durationMs: number, outcome: 'applied' | 'conflict' | 'error'): void {
    this.guard('reconciled', () => {
      // A clock step can make a measured duration negative; it still was a reconcile.
      this.reconcileDuration.observe({ outcome }, Math.max(0, durationMs) / 1000);
    });
  }

  apiRequest(sample: ApiRequestSample): void {
    this.guard('apiRequest', () => {
      const code = sample.code === null ? NO_ANSWER_CODE : String(sample.code);
      this.apiRequests.inc({ verb: sample.verb, resource: sample.resource, code });
    });
  }

  leading(isLeader: boolean): void {
    this.guard('leading', () => this.leader.set(isLeader ? 1 : 0));
    // A replica that stopped leading no longer sees its rollouts' changes, nor their deletion: its
    // series would go stale and outlive the rollouts. The next term reports them afresh.
    if (!isLeader) for (const name of [...this.series.keys()]) this.rolloutForgotten(name);
  }

  trustMetadataObserved(roles: readonly TrustRoleExpiry[]): void {
    this.guard('trustMetadataObserved', () => {
      for (const { role, expiresMs, expiringSoon } of roles) {
        // An unreadable expiry has no timestamp to show; its warning says enough.
        if (expiresMs === null) this.trustExpiry.remove({ role });
        else this.trustExpiry.set({ role }, expiresMs / 1000);
        this.trustExpiring.set({ role }, expiringSoon ? 1 : 0);
      }
    });
  }

  private seriesOf(name: string): RolloutSeries {
    let series = this.series.get(name);
    if (series === undefined) {
      series = { failureReasons: new Set(), haltReasons: new Set() };
      this.series.set(name, series);
    }
    return series;
  }

  /** Metrics are never worth failing the controller for: what goes wrong is reported, not thrown. */
  private guard(method: keyof ControllerMetrics, record: () => void): void {
    try {
      record();
    } catch (error) {
      try {
        this.onError(error, method);
      } catch {
        // The report itself failed; there is nobody left to tell.
      }
    }
  }
}

function finiteCount(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new TypeError(`not a finite count: ${String(value)}`);
  }
  return value;
}
