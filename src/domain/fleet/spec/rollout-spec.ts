import type { LabelSelector } from '../../common/machine-selector.js';
import type { Amount } from './amount.js';
import type { Condition } from './analysis-condition.js';

/**
 * An AgentRollout's spec, parsed (parse-rollout-spec.ts). The shape follows the API; durations
 * are parsed into milliseconds and int-or-percent fields into `Amount`s, with defaults applied.
 */

export const ROLLOUT_STATES = ['Preview', 'Run', 'Pause', 'Abort', 'RollBack'] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

export const ON_FAILURE = ['Halt', 'RollBackWave', 'RollBackAll'] as const;
export type OnFailure = (typeof ON_FAILURE)[number];

export type Gate = 'Auto' | 'Manual';

export const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface WaveSpec {
  readonly name: string;
  /** Cumulative: how many machines of the fleet have been reached when this wave ends. */
  readonly size: Amount;
  /** Of the wave's size; at least 1. Default 10%. */
  readonly maxInFlight: Amount;
  /** Failures the wave tolerates, of the wave's size; one more halts. Default 0 for count waves, 1% otherwise. */
  readonly failureBudget: Amount;
  /** How long the wave's result must hold before the next wave may start. */
  readonly bakeMs: number;
  /** Manual: once the wave is done, the next one waits for a person's approval of this one. */
  readonly gate: Gate;
  /** Canaries: members are spread over architectures and zones. Count waves and the first wave. */
  readonly diverse: boolean;
  /** Queries that must hold while the wave bakes: its own `analysis`, else the rollout's; `null`: none. */
  readonly analysis: AnalysisSpec | null;
}

/** Prometheus queries run while a wave bakes (analysis-run.ts), as Argo Rollouts' Prometheus provider runs them. */
export interface AnalysisSpec {
  readonly metrics: readonly AnalysisMetricSpec[];
}

export interface AnalysisMetricSpec {
  /** A DNS label, unique in its analysis. */
  readonly name: string;
  /** The Prometheus server's base URL (`http://prometheus.monitoring:9090`). */
  readonly address: string;
  /** A PromQL instant query. */
  readonly query: string;
  /** The condition's text, for messages, and its parsed form. */
  readonly successCondition: string;
  readonly condition: Condition;
  /** Between measurements; the first is taken when the bake starts. Default 1m. */
  readonly intervalMs: number;
  /** Measurements to take. Default 1. */
  readonly count: number;
  /** Failed measurements tolerated; one more fails the analysis. Default 0. */
  readonly failureLimit: number;
  /** Measurements in a row that could not be taken or judged, tolerated; one more fails the analysis. Default 4. */
  readonly consecutiveErrorLimit: number;
}

export interface RolloutStrategy {
  readonly waves: readonly WaveSpec[];
  /** Fleet-wide cap on operations in flight plus failures that left a machine unusable; `null`: none. */
  readonly maxUnavailable: Amount | null;
  /** An operation Pending or InProgress longer than this is timed out. Default 30m. */
  readonly operationTimeoutMs: number;
  readonly onFailure: OnFailure;
  readonly quarantineOnHalt: boolean;
  /** The analysis of every wave without its own. */
  readonly analysis: AnalysisSpec | null;
  /** The Node gate (node-verdict.ts): a Complete operation counts once its Node proves it came back. */
  readonly nodeReadiness: NodeReadinessSpec;
}

export interface NodeReadinessSpec {
  /** Default true. */
  readonly enabled: boolean;
  /** How long after its operation completed a machine's Node may take to be Ready with a renewed Lease. Default 10m. */
  readonly timeoutMs: number;
}

export interface RollbackSpec {
  readonly releaseRef: { readonly name: string };
  readonly maxInFlight: Amount;
  readonly failureBudget: Amount;
}

export interface ScheduleWindow {
  /** Days the window opens on; all days when the list was empty. */
  readonly days: readonly Weekday[];
  /** Minutes after local midnight. */
  readonly startMinute: number;
  readonly durationMs: number;
  /** An IANA time zone; `UTC` by default. */
  readonly timeZone: string;
}

export interface AgentRolloutSpec {
  readonly releaseRef: { readonly name: string };
  readonly targets: { readonly selector: LabelSelector };
  readonly state: RolloutState;
  readonly resumeFromHalt: string;
  readonly strategy: RolloutStrategy;
  readonly rollback: RollbackSpec | null;
  /** No windows: always open. */
  readonly schedule: { readonly windows: readonly ScheduleWindow[] };
}

export const DEFAULT_MAX_IN_FLIGHT: Amount = { kind: 'percent', value: 10 };
export const DEFAULT_OPERATION_TIMEOUT_MS = 30 * 60_000;
export const DEFAULT_NODE_READY_TIMEOUT_MS = 10 * 60_000;
export const MAX_WAVES = 16;
export const MAX_WINDOWS = 16;
