import { resolveCap, resolveTolerance } from '../spec/amount.js';
import { chargesBudget, holdsSlot, REASON_INVALID_PARAMETERS } from './classify-child.js';
import { versionMatcher, type Fleet, type Machine } from '../order/fleet.js';
import type { ResolvedRelease } from './resolve-release.js';
import { REASON_NODE_NOT_READY } from './node-verdict.js';
import type { RollbackSpec } from '../spec/rollout-spec.js';
import type { RollbackStatus } from '../status/rollout-status.js';
import { formatTimestamp } from '../spec/time-text.js';
import { LABEL_ARCH, MAX_PENDING_CREATES } from '../spec/rollout-vocabulary.js';

/**
 * Fleet rollback: an AgentUpgrade to the rollback release for every machine in scope that
 * reported Complete on the release being rolled back. A machine whose upgrade failed needs none
 * (DaemonFailed rolled itself back to last-good; the others were never switched). It has its own
 * slots and budget; past the budget the rollout is Failed and stops. Operations of the forward
 * rollout still running are waited for, since they may yet complete and need rolling back.
 */

export interface RollbackInputs {
  readonly fleet: Fleet;
  readonly previous: RollbackStatus;
  readonly spec: RollbackSpec;
  readonly release: ResolvedRelease;
  /** False while paused or aborted: announced creates are dropped, nothing new is picked. */
  readonly creating: boolean;
  /** What maxUnavailable leaves for new rollback operations. */
  readonly unavailableRoom: number;
  readonly nowMs: number;
}

export interface RollbackPlan {
  readonly status: RollbackStatus;
  readonly creates: readonly Machine[];
  /** Machines counted rolledBack, lost, or with a rollback operation announced. */
  readonly rolledBack: ReadonlySet<string>;
  readonly lost: ReadonlySet<string>;
  readonly announced: ReadonlySet<string>;
}

/** Its operation Complete: the new release runs there, whether its Node then proved itself or not. */
function runsRelease(m: Machine): boolean {
  const outcome = m.forward?.outcome;
  return outcome?.kind === 'succeeded' || (outcome?.kind === 'failed' && outcome.reason === REASON_NODE_NOT_READY);
}

export function planRollback(inputs: RollbackInputs): RollbackPlan {
  const { fleet, previous, release } = inputs;
  const inScope = (m: Machine): boolean =>
    m.forward !== null && (previous.scope === 'All' || m.forward.wave === previous.wave);
  const candidates = fleet.machines.filter((m) => inScope(m) && (m.rollback !== null || runsRelease(m)));
  const waitingForward = fleet.machines.filter((m) => inScope(m) && m.forward?.outcome.kind === 'inFlight').length;
  const sorted = sortCandidates(candidates, new Set(previous.pendingCreates), release);
  const accounted = sorted.withChild.length + fleet.goneRollbackChildren + sorted.announced.length;
  const cursorBase = Math.max(previous.cursor - sorted.dropped, accounted);
  const lost = sorted.eligible.slice(0, cursorBase - accounted);
  const pool = sorted.eligible.slice(lost.length);
  const size = candidates.length;
  const tally = tallyRollback(sorted.withChild);
  const maxInFlight = resolveCap(inputs.spec.maxInFlight, size, 'up');
  const allowed = resolveTolerance(inputs.spec.failureBudget, size);
  const phase = rollbackPhase(previous, tally, allowed, release, pool.length + sorted.announced.length, waitingForward);
  const failing = phase.phase === 'Failed' ? phase.reason : undefined;
  const creating = inputs.creating && phase.phase === 'Progressing' && release.spec !== null;
  const kept = creating ? sorted.announced : [];
  const room = Math.min(
    maxInFlight - tally.slots - kept.length,
    MAX_PENDING_CREATES - kept.length,
    inputs.unavailableRoom,
  );
  const creates = creating && room > 0 ? pool.slice(0, room) : [];
  const announced = [...kept, ...creates];
  const status: RollbackStatus = {
    scope: previous.scope,
    ...(previous.wave !== undefined && { wave: previous.wave }),
    ...((release.snapshot ?? previous.release) && { release: release.snapshot ?? previous.release }),
    phase: phase.phase,
    ...(failing !== undefined ? { reason: failing } : previous.reason !== undefined && { reason: previous.reason }),
    size,
    cursor: cursorBase - (sorted.announced.length - kept.length) + creates.length,
    pendingCreates: announced.map((m) => m.rollbackChildName),
    failureBudget: { allowed, used: tally.used },
    inFlight: tally.slots + announced.length,
    rolledBack: tally.succeeded + sorted.alreadyBack.length,
    failed: tally.failed,
    timedOut: tally.timedOut,
    lost: lost.length,
    noArtifact: sorted.noArtifact,
    startedAt: previous.startedAt,
    ...completedAt(previous, phase.phase, inputs.nowMs),
  };
  return {
    status,
    creates,
    rolledBack: new Set(
      [...sorted.withChild.filter((m) => m.rollback?.outcome.kind === 'succeeded'), ...sorted.alreadyBack].map(
        (m) => m.name,
      ),
    ),
    lost: new Set(lost.map((m) => m.name)),
    announced: new Set(announced.map((m) => m.name)),
  };
}

function sortCandidates(candidates: readonly Machine[], announcedNames: ReadonlySet<string>, release: ResolvedRelease) {
  const withChild = candidates.filter((m) => m.rollback !== null);
  const without = candidates.filter((m) => m.rollback === null);
  const announced = without.filter((m) => announcedNames.has(m.rollbackChildName) && !m.busy);
  const artifacts = release.facts.artifacts;
  const atVersion = versionMatcher(release.facts.version);
  const back = (m: Machine): boolean => atVersion(m.agentVersion);
  const lacking = (m: Machine): boolean =>
    artifacts !== null && !artifacts.some((artifact) => artifact.arch === m.labels[LABEL_ARCH]);
  const rest = without.filter((m) => !(announcedNames.has(m.rollbackChildName) && !m.busy));
  const alreadyBack = rest.filter(back);
  const noArtifact = rest.filter((m) => !back(m) && lacking(m)).length;
  const eligible = rest.filter((m) => !back(m) && !lacking(m) && !m.busy);
  const observed = withChild.filter((m) => announcedNames.has(m.rollback?.child.name ?? '')).length;
  const dropped = Math.max(0, announcedNames.size - announced.length - observed);
  return { withChild, announced, alreadyBack, noArtifact, eligible, dropped };
}

function tallyRollback(withChild: readonly Machine[]) {
  const tally = { slots: 0, running: 0, used: 0, invalid: 0, failed: 0, timedOut: 0, succeeded: 0 };
  for (const machine of withChild) {
    const outcome = machine.rollback?.outcome;
    if (outcome === undefined) continue;
    if (holdsSlot(outcome)) tally.slots += 1;
    if (outcome.kind === 'inFlight') tally.running += 1;
    if (chargesBudget(outcome)) tally.used += 1;
    if (outcome.kind === 'failed') tally.failed += 1;
    if (outcome.kind === 'failed' && outcome.reason === REASON_INVALID_PARAMETERS) tally.invalid += 1;
    if (outcome.kind === 'timedOut') tally.timedOut += 1;
    if (outcome.kind === 'succeeded') tally.succeeded += 1;
  }
  return tally;
}

function rollbackPhase(
  previous: RollbackStatus,
  tally: ReturnType<typeof tallyRollback>,
  allowed: number,
  release: ResolvedRelease,
  waitingCreates: number,
  waitingForward: number,
): { phase: RollbackStatus['phase']; reason?: string } {
  if (previous.phase !== 'Progressing') return { phase: previous.phase };
  if (tally.invalid > 0) return { phase: 'Failed', reason: 'InvalidParameters' };
  if (tally.used > allowed) return { phase: 'Failed', reason: 'RollbackBudgetExceeded' };
  if (release.quarantined) return { phase: 'Failed', reason: 'RollbackReleaseQuarantined' };
  if (waitingCreates === 0 && tally.running === 0 && waitingForward === 0) return { phase: 'Completed' };
  return { phase: 'Progressing' };
}

function completedAt(
  previous: RollbackStatus,
  phase: RollbackStatus['phase'],
  nowMs: number,
): { completedAt?: string } {
  if (previous.completedAt !== undefined) return { completedAt: previous.completedAt };
  return phase === 'Progressing' ? {} : { completedAt: formatTimestamp(nowMs) };
}
