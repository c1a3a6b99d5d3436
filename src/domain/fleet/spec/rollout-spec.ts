import type { LabelSelector } from '../../common/machine-selector.js';
import type { Amount } from './amount.js';

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
}

export interface RolloutStrategy {
  readonly waves: readonly WaveSpec[];
  /** Fleet-wide cap on operations in flight plus failures that left a machine unusable; `null`: none. */
  readonly maxUnavailable: Amount | null;
  /** An operation Pending or InProgress longer than this is timed out. Default 30m. */
  readonly operationTimeoutMs: number;
  readonly onFailure: OnFailure;
  readonly quarantineOnHalt: boolean;
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
export const MAX_WAVES = 16;
export const MAX_WINDOWS = 16;
