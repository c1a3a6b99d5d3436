import type { EventReason, EventSubject, RolloutEvent } from './actions.js';
import type { PreviousStatus } from '../status/read-rollout-status.js';
import type { Decision } from './rollout-decision.js';
import type { AgentRolloutStatus, RolloutPhase } from '../status/rollout-status.js';

/**
 * The events of a plan, derived from what changed between the status read and the status
 * written, so replanning an unchanged world emits nothing and every transition is told once
 * (unless the update that records it fails, in which case it is planned, and told, again).
 */

const PHASE_EVENTS: Readonly<Record<RolloutPhase, readonly [EventReason, 'Normal' | 'Warning']>> = {
  Preview: ['PreviewReady', 'Normal'],
  WaitingForWindow: ['WaitingForWindow', 'Normal'],
  Progressing: ['RolloutProgressing', 'Normal'],
  Baking: ['WaveBaking', 'Normal'],
  AwaitingApproval: ['AwaitingApproval', 'Normal'],
  Paused: ['RolloutPaused', 'Normal'],
  Halted: ['RolloutHalted', 'Warning'],
  RollingBack: ['RollbackStarted', 'Warning'],
  RolledBack: ['RolledBack', 'Normal'],
  Succeeded: ['RolloutSucceeded', 'Normal'],
  Aborted: ['RolloutAborted', 'Warning'],
  Failed: ['RollbackFailed', 'Warning'],
};

export function transitionEvents(
  previous: PreviousStatus,
  next: AgentRolloutStatus,
  decision: Decision,
  rollout: EventSubject,
  release: EventSubject | null,
): RolloutEvent[] {
  const events: RolloutEvent[] = [];
  const add = (reason: EventReason, type: 'Normal' | 'Warning', message: string, regarding = rollout): void => {
    events.push({ type, reason, message, regarding });
  };
  if (next.resumed !== undefined && next.resumed.haltId !== previous.resumed?.haltId) {
    add('RolloutResumed', 'Normal', `halt ${next.resumed.haltId} resumed`);
  }
  for (const wave of next.waves) {
    const before = previous.waves.find((entry) => entry.name === wave.name);
    if (wave.startedAt !== undefined && before?.startedAt === undefined) {
      add('WaveStarted', 'Normal', `wave ${wave.name} started: ${wave.size} machine(s)`);
    }
    if (wave.completedAt !== undefined && before?.completedAt === undefined) {
      const { allowed, used } = wave.failureBudget;
      add('WaveCompleted', 'Normal', `wave ${wave.name} completed: ${used} failure(s), ${allowed} allowed`);
    }
  }
  const halt = decision.newHalt === null ? null : (next.halt ?? null);
  if (decision.newHalt !== null && halt !== null) {
    if (decision.newHalt.reason !== 'ReleaseQuarantined') add(decision.newHalt.reason, 'Warning', halt.message);
    add(
      'RolloutHalted',
      'Warning',
      `halted (${halt.reason}): ${halt.message}; resume with spec.resumeFromHalt: ${halt.id}`,
    );
    if (halt.quarantine === 'Requested') {
      const message = `release ${next.release?.name ?? ''} quarantined by rollout ${rollout.name}: ${halt.message}`;
      add('ReleaseQuarantined', 'Warning', message);
      if (release !== null) add('ReleaseQuarantined', 'Warning', message, release);
    }
  }
  if (next.phase !== previous.phase && !(next.phase === 'Halted' && halt !== null)) {
    const [reason, type] = PHASE_EVENTS[next.phase];
    add(reason, type, phaseMessage(next));
  }
  if (next.counts.lost > previous.counts.lost) {
    add(
      'OperationsLost',
      'Warning',
      `${next.counts.lost - previous.counts.lost} operation(s) deleted by hand; never recreated`,
    );
  }
  if (next.counts.excluded.vanished > previous.counts.vanished) {
    const gone = next.counts.excluded.vanished - previous.counts.vanished;
    add('MachinesVanished', 'Normal', `${gone} machine(s) left the targets; not counted as failures`);
  }
  const ready = next.conditions.find((condition) => condition.type === 'ReleaseReady');
  const wasReady = previous.conditions.find((condition) => condition.type === 'ReleaseReady');
  // A quarantine this rollout made was told as ReleaseQuarantined when it halted.
  const ownQuarantine = ready?.reason === 'ReleaseQuarantined' && next.halt?.quarantine !== undefined;
  if (ready?.status === 'False' && wasReady?.status !== 'False' && !ownQuarantine)
    add('ReleaseUnavailable', 'Warning', ready.message);
  return events;
}

function phaseMessage(status: AgentRolloutStatus): string {
  const wave = status.currentWave === undefined ? '' : `, wave ${status.currentWave}`;
  return `phase ${status.phase}${wave}, ${status.progress} upgraded`;
}
