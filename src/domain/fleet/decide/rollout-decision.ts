import type { Availability } from './availability.js';
import { planRollback, type RollbackPlan } from './fleet-rollback.js';
import type { Fleet } from '../order/fleet.js';
import type { ForwardLedger, WaveLedger } from './forward-ledger.js';
import { advanceForward, type ForwardProgress } from './forward-progress.js';
import { findHalt, haltRecord, type HaltFinding } from './halt-rules.js';
import type { PreviousStatus } from '../status/read-rollout-status.js';
import type { ResolvedRelease } from './resolve-release.js';
import type { AgentRolloutSpec } from '../spec/rollout-spec.js';
import type {
  AnalysisStatus,
  HaltStatus,
  ResumedStatus,
  RollbackStatus,
  RolloutPhase,
} from '../status/rollout-status.js';
import { analysisHalt } from './analysis-run.js';
import { formatTimestamp } from '../spec/time-text.js';

/**
 * The gates, in order: the requested state (Abort, Pause, Preview, RollBack), a rollback under
 * way, a halt not resumed, a quarantined release, new evidence that halts, and then the forward
 * gates (window, manual approval, bake). Finished rollouts stay finished; only RollBack moves a
 * Succeeded or Aborted one. Nothing here cancels an operation: gates only stop new ones.
 */

export interface DecisionInputs {
  readonly rolloutUid: string;
  readonly spec: AgentRolloutSpec;
  readonly previous: PreviousStatus;
  readonly fleet: Fleet;
  readonly ledger: ForwardLedger;
  readonly availability: Availability;
  readonly release: ResolvedRelease;
  readonly rollbackRelease: ResolvedRelease | null;
  readonly windowOpen: boolean;
  readonly approvedWave: string;
  /** The baking waves' analyses, with this plan's measurements recorded (analysis-run.ts). */
  readonly analyses: ReadonlyMap<string, AnalysisStatus>;
  readonly nowMs: number;
}

export interface Decision {
  readonly phase: RolloutPhase;
  readonly halt: HaltStatus | null;
  readonly resumed: ResumedStatus | null;
  /** A halt was resumed in this plan: every started wave accepts its failures so far. */
  readonly accept: boolean;
  /** Halted in this plan, with what stopped it. */
  readonly newHalt: HaltFinding | null;
  /** `null`: the forward rollout is frozen; announced forward creates are dropped. */
  readonly forward: ForwardProgress | null;
  readonly rollback: RollbackPlan | null;
  /** Write the release quarantine (again: a crash may have lost the first patch). */
  readonly quarantine: boolean;
}

const FINAL: readonly RolloutPhase[] = ['RolledBack', 'Failed'];
const DONE: readonly RolloutPhase[] = ['Succeeded', 'Aborted'];
const FORWARD: readonly RolloutPhase[] = ['Progressing', 'Baking', 'WaitingForWindow', 'AwaitingApproval'];

export function decide(inputs: DecisionInputs): Decision {
  return settleQuarantine(decideGates(inputs), inputs);
}

/**
 * A quarantine a halt requested is written until the release is seen quarantined, whatever the
 * phase: the patch follows the status update, so a crash in between must not lose it. Once seen,
 * it is marked Applied and never written again, so a person who lifts it is not overruled.
 */
function settleQuarantine(decision: Decision, inputs: DecisionInputs): Decision {
  const halt = decision.halt;
  if (halt === null || halt.quarantine !== 'Requested' || decision.quarantine) return decision;
  if (decision.resumed?.haltId === halt.id) return decision;
  if (inputs.release.quarantined) return { ...decision, halt: { ...halt, quarantine: 'Applied' } };
  return { ...decision, quarantine: true };
}

function decideGates(inputs: DecisionInputs): Decision {
  const { spec, previous } = inputs;
  const phase = previous.phase;
  const frozen = (to: RolloutPhase, halt: HaltStatus | null = previous.halt): Decision => ({
    ...still(previous, halt),
    phase: to,
    rollback: continueRollback(inputs, previous.rollback, false),
  });
  if (phase !== null && FINAL.includes(phase)) return frozen(phase);
  if (phase !== null && DONE.includes(phase) && spec.state !== 'RollBack') return frozen(phase);
  if (spec.state === 'Abort') return frozen('Aborted');
  if (spec.state === 'Pause') return frozen('Paused');
  if (spec.state === 'Preview')
    return frozen(previous.waves.some((w) => w.startedAt !== undefined) ? 'Paused' : 'Preview');
  const requested = spec.state === 'RollBack' ? startRollback(inputs, 'All', '') : previous.rollback;
  if (requested !== null) return rollingBack(inputs, previous.halt, requested, null);
  return decideRunning(inputs);
}

function decideRunning(inputs: DecisionInputs): Decision {
  const { spec, previous, release, nowMs } = inputs;
  const halt = previous.halt;
  const resumedBefore = previous.resumed;
  const active = halt !== null && resumedBefore?.haltId !== halt.id;
  let resumed = resumedBefore;
  if (active) {
    if (spec.resumeFromHalt !== halt.id) return haltedStill(inputs, halt);
    resumed = { haltId: halt.id, at: formatTimestamp(nowMs), unavailable: inputs.availability.stuckTotal };
  }
  if (release.problem !== null) {
    // Nothing can be dispatched without the release; the ReleaseReady condition says why.
    const shown = previous.phase !== null && FORWARD.includes(previous.phase) ? previous.phase : 'Progressing';
    return { ...still(previous, halt), phase: shown };
  }
  const accept = active;
  const current = currentWave(inputs.ledger);
  const finding: HaltFinding | null = release.quarantined
    ? { reason: 'ReleaseQuarantined', wave: current?.spec.name ?? '', message: quarantineMessage(release) }
    : accept
      ? null
      : (findHalt(inputs.ledger, inputs.availability, current) ??
        analysisHalt(inputs.spec.strategy.waves, inputs.analyses));
  if (finding !== null) return halting(inputs, finding, resumed);
  const forward = advanceForward({
    ledger: inputs.ledger,
    availability: accept
      ? { ...inputs.availability, room: roomAfterAccepting(inputs.availability) }
      : inputs.availability,
    windowOpen: inputs.windowOpen,
    approvedWave: inputs.approvedWave,
    analyses: inputs.analyses,
    nowMs,
  });
  return { phase: forward.phase, halt, resumed, accept, newHalt: null, forward, rollback: null, quarantine: false };
}

function halting(inputs: DecisionInputs, finding: HaltFinding, resumed: ResumedStatus | null): Decision {
  const { spec, release, ledger, availability, previous, nowMs } = inputs;
  const wave = ledger.waves.find((entry) => entry.spec.name === finding.wave);
  // Untrusted joins the evidence only when present, so halts without it keep the ids they had.
  const untrusted = wave !== undefined && wave.untrusted > 0 ? [wave.untrusted] : [];
  const evidence = [
    wave?.usedFailures,
    wave?.invalidParameters,
    wave?.timedOutLive,
    availability.stuckTotal,
    ...untrusted,
  ].join('/');
  const blamesRelease = finding.reason !== 'InvalidParameters' && finding.reason !== 'ReleaseQuarantined';
  const quarantine = spec.strategy.quarantineOnHalt && blamesRelease && !release.quarantined;
  const halt = haltRecord(
    finding,
    inputs.rolloutUid,
    evidence,
    previous.halt?.id ?? '',
    formatTimestamp(nowMs),
    quarantine,
  );
  const onFailure = spec.strategy.onFailure;
  if (!blamesRelease || onFailure === 'Halt') {
    return { ...still(previous, halt), resumed, phase: 'Halted', newHalt: finding, quarantine };
  }
  const scope = onFailure === 'RollBackAll' ? 'All' : 'Wave';
  const started = startRollback(inputs, scope, finding.wave || (currentWave(ledger)?.spec.name ?? ''));
  return { ...rollingBack(inputs, halt, started, finding), resumed, quarantine };
}

function haltedStill(inputs: DecisionInputs, halt: HaltStatus): Decision {
  if (halt.quarantine !== 'Requested') return { ...still(inputs.previous, halt), phase: 'Halted' };
  // The patch may have been lost in a crash: write it until the release is seen quarantined.
  if (inputs.release.quarantined)
    return { ...still(inputs.previous, { ...halt, quarantine: 'Applied' }), phase: 'Halted' };
  return { ...still(inputs.previous, halt), phase: 'Halted', quarantine: true };
}

function rollingBack(
  inputs: DecisionInputs,
  halt: HaltStatus | null,
  rollback: RollbackStatus,
  finding: HaltFinding | null,
): Decision {
  const plan = continueRollback(inputs, rollback, true);
  const rollbackPhase = plan?.status.phase ?? 'Progressing';
  const phase: RolloutPhase =
    rollbackPhase === 'Completed' ? 'RolledBack' : rollbackPhase === 'Failed' ? 'Failed' : 'RollingBack';
  return { ...still(inputs.previous, halt), phase, newHalt: finding, rollback: plan };
}

function continueRollback(
  inputs: DecisionInputs,
  status: RollbackStatus | null,
  creating: boolean,
): RollbackPlan | null {
  const spec = inputs.spec.rollback;
  if (status === null || spec === null || inputs.rollbackRelease === null) return null;
  return planRollback({
    fleet: inputs.fleet,
    previous: status,
    spec,
    release: inputs.rollbackRelease,
    creating,
    unavailableRoom: inputs.availability.repairRoom,
    nowMs: inputs.nowMs,
  });
}

function startRollback(inputs: DecisionInputs, scope: 'Wave' | 'All', wave: string): RollbackStatus {
  const before = inputs.previous.rollback;
  // An operator's RollBack widens a wave rollback to everything; it never narrows one.
  if (before !== null)
    return scope === 'All' && before.scope === 'Wave' ? { ...before, scope: 'All', wave: undefined } : before;
  return {
    scope,
    ...(scope === 'Wave' && { wave }),
    phase: 'Progressing',
    size: 0,
    cursor: 0,
    pendingCreates: [],
    failureBudget: { allowed: 0, used: 0 },
    inFlight: 0,
    rolledBack: 0,
    failed: 0,
    timedOut: 0,
    lost: 0,
    noArtifact: 0,
    startedAt: formatTimestamp(inputs.nowMs),
  };
}

function still(previous: PreviousStatus, halt: HaltStatus | null): Omit<Decision, 'phase'> {
  return {
    halt,
    resumed: previous.resumed,
    accept: false,
    newHalt: null,
    forward: null,
    rollback: null,
    quarantine: false,
  };
}

/** The wave the rollout is in: the first one not completed. */
export function currentWave(ledger: ForwardLedger): WaveLedger | null {
  return ledger.waves.find((wave) => wave.previous?.phase !== 'Completed') ?? null;
}

/** The room once everything stuck is accepted, in the plan that resumes. */
function roomAfterAccepting(availability: Availability): number {
  if (availability.cap === null) return availability.room;
  return Math.max(0, availability.cap - (availability.unavailable - availability.stuck));
}

function quarantineMessage(release: ResolvedRelease): string {
  const reason = release.spec?.quarantine.reason ?? '';
  return `the release is quarantined${reason === '' ? '' : `: ${reason}`}`;
}
