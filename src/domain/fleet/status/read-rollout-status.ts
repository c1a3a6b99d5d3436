import {
  ANALYSIS_PHASES,
  HALT_REASONS,
  ROLLBACK_PHASES,
  ROLLOUT_PHASES,
  WAVE_PHASES,
  type AgentRolloutStatus,
  type AnalysisStatus,
  type MetricStatus,
  type Condition,
  type HaltStatus,
  type ReleaseSnapshot,
  type ResumedStatus,
  type RollbackStatus,
  type WaveStatus,
} from './rollout-status.js';
import { isRecord, type Json } from '../spec/spec-problems.js';
import { isOneOf } from '../../common/one-of.js';

/**
 * Reads back the status the planner wrote, from untrusted JSON. It is the planner's only memory,
 * so a field that does not read as what was written is dropped (treated as never written) rather
 * than guessed at: the planner then recomputes it from the cluster.
 */

/** The fields of a status the planner carries from one reconcile to the next. */
export interface PreviousStatus {
  readonly phase: AgentRolloutStatus['phase'] | null;
  readonly release: ReleaseSnapshot | null;
  readonly targetSnapshot: NonNullable<AgentRolloutStatus['targetSnapshot']> | null;
  readonly waves: readonly WaveStatus[];
  readonly halt: HaltStatus | null;
  readonly resumed: ResumedStatus | null;
  readonly rollback: RollbackStatus | null;
  readonly counts: {
    readonly lost: number;
    readonly vanished: number;
    readonly alreadyAtTarget: number;
    /** Machines the status shows with a live operation of this rollout. */
    readonly inFlight: number;
    readonly timedOut: number;
  };
  readonly conditions: readonly Condition[];
  /** The status as read, to decide whether an update is needed at all. */
  readonly raw: unknown;
}

const nat = (value: unknown): number => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const names = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
const oneOf = <T extends string>(value: unknown, options: readonly T[]): T | null =>
  isOneOf(options, value) ? value : null;

export function readPreviousStatus(raw: unknown): PreviousStatus {
  const status: Json = isRecord(raw) ? raw : {};
  const counts = isRecord(status['counts']) ? status['counts'] : {};
  const excluded = isRecord(counts['excluded']) ? counts['excluded'] : {};
  const snapshot = isRecord(status['targetSnapshot']) ? status['targetSnapshot'] : null;
  const takenAt = text(snapshot?.['takenAt']);
  return {
    phase: oneOf(status['phase'], ROLLOUT_PHASES),
    release: readRelease(status['release']),
    targetSnapshot: snapshot && takenAt !== undefined ? { count: nat(snapshot['count']), takenAt } : null,
    waves: Array.isArray(status['waves']) ? status['waves'].flatMap(readWave) : [],
    halt: readHalt(status['halt']),
    resumed: readResumed(status['resumed']),
    rollback: readRollback(status['rollback']),
    counts: {
      lost: nat(counts['lost']),
      vanished: nat(excluded['vanished']),
      alreadyAtTarget: nat(excluded['alreadyAtTarget']),
      inFlight: nat(counts['inFlight']),
      timedOut: nat(counts['timedOut']),
    },
    conditions: Array.isArray(status['conditions']) ? status['conditions'].flatMap(readCondition) : [],
    raw,
  };
}

function readRelease(raw: unknown): ReleaseSnapshot | null {
  if (!isRecord(raw)) return null;
  const [name, uid, version] = [text(raw['name']), text(raw['uid']), text(raw['version'])];
  return name !== undefined && uid !== undefined && version !== undefined ? { name, uid, version } : null;
}

function readWave(raw: unknown): WaveStatus[] {
  if (!isRecord(raw) || typeof raw['name'] !== 'string') return [];
  const budget = isRecord(raw['failureBudget']) ? raw['failureBudget'] : {};
  const accepted = isRecord(raw['accepted']) ? raw['accepted'] : null;
  const lostMachines = [...new Set(names(raw['lostMachines']).filter((hash) => /^[0-9a-f]{12}$/.test(hash)))];
  return [
    {
      name: raw['name'],
      phase: oneOf(raw['phase'], WAVE_PHASES) ?? 'Pending',
      size: nat(raw['size']),
      cursor: nat(raw['cursor']),
      pendingCreates: names(raw['pendingCreates']),
      failureBudget: { allowed: nat(budget['allowed']), used: nat(budget['used']) },
      ...(nat(raw['lost']) > 0 && { lost: nat(raw['lost']) }),
      ...(nat(raw['lostAtTarget']) > 0 && { lostAtTarget: nat(raw['lostAtTarget']) }),
      ...(lostMachines.length > 0 && { lostMachines }),
      ...(typeof raw['digest'] === 'string' && { digest: raw['digest'] }),
      ...(accepted && {
        accepted: {
          failures: nat(accepted['failures']),
          invalidParameters: nat(accepted['invalidParameters']),
          timedOut: nat(accepted['timedOut']),
          ...(nat(accepted['untrusted']) > 0 && { untrusted: nat(accepted['untrusted']) }),
        },
      }),
      ...optionalTimes(raw, ['startedAt', 'completedAt', 'bakeUntil']),
      ...readAnalysis(raw['analysis']),
    },
  ];
}

/** A wave's analysis as written; one whose start cannot be read is dropped, and so started again. */
function readAnalysis(raw: unknown): { analysis?: AnalysisStatus } {
  if (!isRecord(raw) || typeof raw['startedAt'] !== 'string') return {};
  const metrics = Array.isArray(raw['metrics']) ? raw['metrics'].flatMap(readMetric) : [];
  return {
    analysis: { phase: oneOf(raw['phase'], ANALYSIS_PHASES) ?? 'Running', startedAt: raw['startedAt'], metrics },
  };
}

function readMetric(raw: unknown): MetricStatus[] {
  if (!isRecord(raw) || typeof raw['name'] !== 'string') return [];
  return [
    {
      name: raw['name'],
      phase: oneOf(raw['phase'], ANALYSIS_PHASES) ?? 'Running',
      count: nat(raw['count']),
      successful: nat(raw['successful']),
      failed: nat(raw['failed']),
      errors: nat(raw['errors']),
      consecutiveErrors: nat(raw['consecutiveErrors']),
      ...optionalTimes(raw, ['lastAt', 'lastValue', 'message']),
    },
  ];
}

function optionalTimes(raw: Json, keys: readonly string[]): Record<string, string> {
  const times: Record<string, string> = {};
  for (const key of keys) if (typeof raw[key] === 'string') times[key] = raw[key];
  return times;
}

function readHalt(raw: unknown): HaltStatus | null {
  if (!isRecord(raw)) return null;
  const reason = oneOf(raw['reason'], HALT_REASONS);
  const id = text(raw['id']);
  if (reason === null || id === undefined || id === '') return null;
  const quarantine = oneOf(raw['quarantine'], ['Requested', 'Applied'] as const);
  return {
    id,
    reason,
    wave: text(raw['wave']) ?? '',
    at: text(raw['at']) ?? '',
    message: text(raw['message']) ?? '',
    ...(quarantine !== null && { quarantine }),
  };
}

function readResumed(raw: unknown): ResumedStatus | null {
  if (!isRecord(raw) || typeof raw['haltId'] !== 'string') return null;
  return { haltId: raw['haltId'], at: text(raw['at']) ?? '', unavailable: nat(raw['unavailable']) };
}

function readRollback(raw: unknown): RollbackStatus | null {
  if (!isRecord(raw)) return null;
  const scope = oneOf(raw['scope'], ['Wave', 'All'] as const);
  const startedAt = text(raw['startedAt']);
  if (scope === null || startedAt === undefined) return null;
  const budget = isRecord(raw['failureBudget']) ? raw['failureBudget'] : {};
  const release = readRelease(raw['release']);
  const wave = text(raw['wave']);
  const reason = text(raw['reason']);
  return {
    scope,
    ...(wave !== undefined && { wave }),
    ...(release !== null && { release }),
    phase: oneOf(raw['phase'], ROLLBACK_PHASES) ?? 'Progressing',
    ...(reason !== undefined && { reason }),
    size: nat(raw['size']),
    cursor: nat(raw['cursor']),
    pendingCreates: names(raw['pendingCreates']),
    failureBudget: { allowed: nat(budget['allowed']), used: nat(budget['used']) },
    inFlight: nat(raw['inFlight']),
    rolledBack: nat(raw['rolledBack']),
    failed: nat(raw['failed']),
    timedOut: nat(raw['timedOut']),
    lost: nat(raw['lost']),
    noArtifact: nat(raw['noArtifact']),
    startedAt,
    ...optionalTimes(raw, ['completedAt']),
  };
}

function readCondition(raw: unknown): Condition[] {
  if (!isRecord(raw) || typeof raw['type'] !== 'string') return [];
  const status = oneOf(raw['status'], ['True', 'False', 'Unknown'] as const) ?? 'Unknown';
  return [
    {
      type: raw['type'],
      status,
      reason: text(raw['reason']) ?? '',
      message: text(raw['message']) ?? '',
      lastTransitionTime: text(raw['lastTransitionTime']) ?? '',
      observedGeneration: nat(raw['observedGeneration']),
    },
  ];
}
