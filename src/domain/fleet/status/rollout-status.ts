/**
 * An AgentRollout's status as it is written to the API (JSON). It holds cursors, counts and
 * bounded samples, never a list of all machines: the only names are the failure sample (at most
 * 20), the creates announced for the current step (pendingCreates, at most 100) and the hashes of
 * machines whose operation was deleted by hand (lostMachines, at most MAX_LOST_LISTED in all), so
 * it stays far below the API server's object limits at any fleet size.
 */

export const ROLLOUT_PHASES = [
  'Preview',
  'WaitingForWindow',
  'Progressing',
  'Baking',
  'AwaitingApproval',
  'Paused',
  'Halted',
  'RollingBack',
  'RolledBack',
  'Succeeded',
  'Aborted',
  'Failed',
] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

export const WAVE_PHASES = ['Pending', 'Progressing', 'Baking', 'Completed', 'Halted'] as const;
export type WavePhase = (typeof WAVE_PHASES)[number];

export const HALT_REASONS = [
  'FailureBudgetExceeded',
  'MaxUnavailableReached',
  'OperationsStalled',
  'InvalidParameters',
  'ReleaseQuarantined',
  'Untrusted',
  'AnalysisFailed',
] as const;
export type HaltReason = (typeof HALT_REASONS)[number];

export interface ExcludedCounts {
  readonly optedOut: number;
  readonly alreadyAtTarget: number;
  readonly conflict: number;
  readonly vanished: number;
  /** Machines whose architecture the release has no artifact for. */
  readonly noArtifact: number;
}

/**
 * Every target machine is in exactly one of these; `excluded.vanished` also counts machines with
 * an operation of this rollout that are no longer targets, so the classes add up to `targets`
 * plus those.
 */
export interface RolloutCounts {
  readonly targets: number;
  readonly excluded: ExcludedCounts;
  readonly pending: number;
  readonly inFlight: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly timedOut: number;
  readonly lost: number;
  readonly rolledBack: number;
}

export interface BudgetStatus {
  readonly allowed: number;
  readonly used: number;
}

/** What an operator accepted by resuming a halt in this wave: failures up to here are forgiven. */
export interface AcceptedFailures {
  readonly failures: number;
  readonly invalidParameters: number;
  readonly timedOut: number;
  /** Written only when some were accepted, so statuses of rollouts without any keep their shape. */
  readonly untrusted?: number;
}

export interface WaveStatus {
  readonly name: string;
  readonly phase: WavePhase;
  readonly size: number;
  /** Machines this wave has dispatched: announced, created, or created and deleted by hand (unless it then left the targets). */
  readonly cursor: number;
  readonly pendingCreates: readonly string[];
  readonly failureBudget: BudgetStatus;
  /** Operations of this wave deleted by hand (never recreated), less those whose machine left the targets; omitted while none. */
  readonly lost?: number;
  /** Of those, the ones whose machine reports the target version (counted alreadyAtTarget). */
  readonly lostAtTarget?: number;
  /** The others that are targets, by the 12 hex digits that end their operation's name, sorted. */
  readonly lostMachines?: readonly string[];
  /** The machines the wave accounts for by name, as a loss digest (loss-digest.ts); omitted while none. */
  readonly digest?: string;
  readonly accepted?: AcceptedFailures;
  readonly startedAt?: string;
  readonly completedAt?: string;
  readonly bakeUntil?: string;
  /** The wave's analysis while it bakes, and its result after; omitted for a wave without one. */
  readonly analysis?: AnalysisStatus;
}

export const ANALYSIS_PHASES = ['Running', 'Successful', 'Failed'] as const;
export type AnalysisPhase = (typeof ANALYSIS_PHASES)[number];

/**
 * The recorded measurements of one wave's analysis: counts per metric and the last value, never
 * the whole series, so it stays small. The planner decides from it alone (analysis-run.ts).
 */
export interface AnalysisStatus {
  readonly phase: AnalysisPhase;
  /** When the measurements started: the wave's completion, or the resume that started them again. */
  readonly startedAt: string;
  readonly metrics: readonly MetricStatus[];
}

export interface MetricStatus {
  readonly name: string;
  readonly phase: AnalysisPhase;
  /** Measurements taken, and of them those whose condition held, did not, or could not be judged. */
  readonly count: number;
  readonly successful: number;
  readonly failed: number;
  readonly errors: number;
  readonly consecutiveErrors: number;
  /** The last measurement: when, the query's value(s), and what it said when it did not succeed. */
  readonly lastAt?: string;
  readonly lastValue?: string;
  readonly message?: string;
}

export interface FailureSample {
  readonly machine: string;
  readonly operation: string;
  readonly wave: string;
  readonly reason: string;
  readonly message: string;
  readonly at: string;
}

export interface FailureSummary {
  readonly sample: readonly FailureSample[];
  readonly byReason: Readonly<Record<string, number>>;
  /** `key=value` of node labels (architecture, zone, region, instance type) → failures. */
  readonly byLabel: Readonly<Record<string, number>>;
}

export interface HaltStatus {
  /** Set `spec.resumeFromHalt` to this to resume. */
  readonly id: string;
  readonly reason: HaltReason;
  readonly wave: string;
  readonly at: string;
  readonly message: string;
  /** Requested: the release quarantine is still to be written; Applied: it was seen written. */
  readonly quarantine?: 'Requested' | 'Applied';
}

export interface ResumedStatus {
  readonly haltId: string;
  readonly at: string;
  /** Unavailable machines accepted with the resume (they no longer block new operations). */
  readonly unavailable: number;
}

export interface ReleaseSnapshot {
  readonly name: string;
  readonly uid: string;
  readonly version: string;
}

export const ROLLBACK_PHASES = ['Progressing', 'Completed', 'Failed'] as const;
export type RollbackPhase = (typeof ROLLBACK_PHASES)[number];

export interface RollbackStatus {
  /** Wave: the machines of the halted wave; All: every machine this rollout upgraded. */
  readonly scope: 'Wave' | 'All';
  readonly wave?: string;
  readonly release?: ReleaseSnapshot;
  readonly phase: RollbackPhase;
  readonly reason?: string;
  readonly size: number;
  readonly cursor: number;
  readonly pendingCreates: readonly string[];
  readonly failureBudget: BudgetStatus;
  readonly inFlight: number;
  readonly rolledBack: number;
  readonly failed: number;
  readonly timedOut: number;
  readonly lost: number;
  readonly noArtifact: number;
  readonly startedAt: string;
  readonly completedAt?: string;
}

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly lastTransitionTime: string;
  readonly observedGeneration: number;
}

export interface AgentRolloutStatus {
  readonly observedGeneration: number;
  readonly phase: RolloutPhase;
  /** `succeeded/machines in scope`, e.g. `812/10000`. */
  readonly progress: string;
  readonly release?: ReleaseSnapshot;
  readonly targetSnapshot?: { readonly count: number; readonly takenAt: string };
  readonly currentWave?: string;
  readonly counts: RolloutCounts;
  readonly waves: readonly WaveStatus[];
  readonly failures: FailureSummary;
  readonly halt?: HaltStatus;
  readonly resumed?: ResumedStatus;
  readonly rollback?: RollbackStatus;
  /** In Preview only: the first wave's machines (at most 20). */
  readonly preview?: { readonly canaries: readonly string[] };
  readonly conditions: readonly Condition[];
}

export const TERMINAL_PHASES: readonly RolloutPhase[] = ['Succeeded', 'Aborted', 'RolledBack', 'Failed'];
