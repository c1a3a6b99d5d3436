import type { RollbackPlan } from '../decide/fleet-rollback.js';
import type { Fleet, Machine } from '../order/fleet.js';
import type { ForwardLedger, WaveLedger } from '../decide/forward-ledger.js';
import { isStarted } from '../decide/halt-rules.js';
import { combine, digestOf, encodeDigest } from '../decide/loss-digest.js';
import type { Decision } from '../decide/rollout-decision.js';
import type { AnalysisStatus, ExcludedCounts, RolloutCounts, WaveStatus } from './rollout-status.js';

/**
 * The parts of the new status that follow from the books and the decision: each wave's cursor,
 * announcements and times, and the count of every target machine in exactly one class.
 */

export interface WaveOutcome {
  readonly status: WaveStatus;
  /** Machines announced in this wave's pendingCreates (kept and new). */
  readonly announced: readonly Machine[];
}

export function waveStatuses(
  ledger: ForwardLedger,
  decision: Decision,
  analyses: ReadonlyMap<string, AnalysisStatus>,
): WaveOutcome[] {
  const dispatch = decision.forward?.dispatch ?? null;
  // The wave a halt stopped stays Halted through what follows it (the rollback, its end).
  const haltedWave = decision.halt !== null && decision.phase !== 'Progressing' ? decision.halt.wave : null;
  return ledger.waves.map((wave) => {
    const dispatching = dispatch !== null && dispatch.wave.index === wave.index;
    const announced = dispatching ? [...wave.announced, ...dispatch.picks] : [];
    const times = decision.forward?.times.get(wave.spec.name);
    const before = wave.previous;
    const startedAt = times?.startedAt ?? before?.startedAt;
    const completedAt = times?.completedAt ?? before?.completedAt;
    const bakeUntil = times?.bakeUntil ?? before?.bakeUntil;
    const done = times?.done === true || before?.phase === 'Completed';
    const accepted = decision.accept && isStarted(wave) ? acceptedNow(wave) : before?.accepted;
    const analysis = analyses.get(wave.spec.name) ?? before?.analysis;
    // The digest follows the cursor: new picks join it, withdrawn announcements leave it.
    const digest = dispatching
      ? combine(wave.digest, digestOf(dispatch.picks.map((machine) => machine.hash)), 1)
      : combine(wave.digest, digestOf(wave.announced.map((machine) => machine.hash)), -1);
    const status: WaveStatus = {
      name: wave.spec.name,
      phase: done
        ? 'Completed'
        : haltedWave === wave.spec.name
          ? 'Halted'
          : completedAt !== undefined
            ? 'Baking'
            : startedAt !== undefined
              ? 'Progressing'
              : 'Pending',
      size: wave.size,
      cursor: wave.cursor - (dispatching ? 0 : wave.announced.length) + (dispatching ? dispatch.picks.length : 0),
      pendingCreates: announced.map((machine) => machine.childName),
      failureBudget: { allowed: wave.allowedFailures, used: wave.usedFailures },
      ...(wave.lostCount > 0 && { lost: wave.lostCount }),
      ...(wave.lostAtTarget > 0 && { lostAtTarget: wave.lostAtTarget }),
      ...(wave.listed.length > 0 && { lostMachines: wave.listed }),
      ...(digest.count > 0 && { digest: encodeDigest(digest) }),
      ...(accepted !== undefined && { accepted }),
      ...(startedAt !== undefined && { startedAt }),
      ...(completedAt !== undefined && { completedAt }),
      ...(bakeUntil !== undefined && { bakeUntil }),
      ...(analysis !== undefined && { analysis }),
    };
    return { status, announced };
  });
}

function acceptedNow(wave: WaveLedger): NonNullable<WaveStatus['accepted']> {
  return {
    failures: wave.usedFailures,
    invalidParameters: wave.invalidParameters,
    timedOut: wave.timedOutLive,
    ...(wave.untrusted > 0 && { untrusted: wave.untrusted }),
  };
}

type MachineClass = keyof Omit<RolloutCounts, 'targets' | 'excluded'> | keyof ExcludedCounts;

export function countMachines(
  fleet: Fleet,
  ledger: ForwardLedger,
  announced: ReadonlySet<string>,
  rollback: RollbackPlan | null,
): RolloutCounts {
  const tally = new Map<MachineClass, number>();
  for (const machine of fleet.machines) {
    const kind = classOf(machine, ledger, announced, rollback);
    tally.set(kind, (tally.get(kind) ?? 0) + 1);
  }
  const get = (kind: MachineClass): number => tally.get(kind) ?? 0;
  return {
    targets: fleet.machines.length,
    excluded: {
      optedOut: get('optedOut'),
      alreadyAtTarget: get('alreadyAtTarget'),
      conflict: get('conflict'),
      vanished: get('vanished') + fleet.goneMachines,
      noArtifact: get('noArtifact'),
    },
    pending: get('pending'),
    inFlight: get('inFlight'),
    succeeded: get('succeeded'),
    failed: get('failed'),
    timedOut: get('timedOut'),
    lost: get('lost'),
    rolledBack: get('rolledBack'),
  };
}

function classOf(
  machine: Machine,
  ledger: ForwardLedger,
  announced: ReadonlySet<string>,
  rollback: RollbackPlan | null,
): MachineClass {
  const latest = machine.rollback ?? machine.forward;
  if (machine.rollback !== null && machine.rollback.outcome.kind === 'succeeded') return 'rolledBack';
  if (rollback?.announced.has(machine.name) === true) return 'inFlight';
  if (rollback?.rolledBack.has(machine.name) === true) return 'rolledBack';
  if (rollback?.lost.has(machine.name) === true) return 'lost';
  if (latest !== null) return latest.outcome.kind;
  if (announced.has(machine.name)) return 'inFlight';
  if (ledger.lost.has(machine.name)) return 'lost';
  return machine.exclusion ?? 'pending';
}
