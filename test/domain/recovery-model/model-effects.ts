import { decideRecoverCommand } from '../../../src/domain/node/recovery/recover-policy.js';
import {
  NO_PROGRESS,
  type AgentMode,
  type StartupDecision,
} from '../../../src/domain/node/recovery/recovery-vocabulary.js';
import type { SlotName } from '../../../src/domain/node/layout/slot.js';
import {
  withCandidate,
  withCandidateDigest,
  withCompleted,
  withFailure,
  withSwitchCommitted,
} from '../../../src/domain/node/record/upgrade-record.js';
import {
  CANDIDATE,
  created,
  DIGEST,
  must,
  PREVIOUS,
  runs,
  healthOf,
  type Proc,
  type Scenario,
  type Variant,
  type World,
} from './model-world.js';

// What each step does to the model host: the old daemon's durable effects on the managed path,
// and the effect of each decision of the recover command and the startup policy.

export type Effect = (w: World, p: Proc) => void;

/** The old daemon's durable effects (docs/protocol.md#managed-path-rows-1-8), in order. */
export function managedEffects(variant: Variant, mode: AgentMode, oldId: string, scenario: Scenario): Effect[] {
  const head: Effect[] = [
    (w) => {
      w.record = created(oldId);
    }, // row 3
    (w) => {
      w.record = withCandidate(must(w.record), CANDIDATE, PREVIOUS);
    }, // row 5
    (w) => {
      w.lastGood = PREVIOUS;
    }, // row 6: protect last-good
    (w) => {
      w.slots[CANDIDATE] = 'v2';
    }, // row 6: install
    (w) => {
      w.record = withCandidateDigest(must(w.record), DIGEST);
    },
    (w) => {
      w.current = CANDIDATE;
    }, // row 7: switch
  ];
  const commitSwitch: Effect = (w) => {
    w.record = withSwitchCommitted(must(w.record));
  };
  switch (variant) {
    case 'normal':
      return [
        ...head,
        commitSwitch,
        (w, p) => {
          // row 8
          if (mode === 'self-hosted') w.restartScheduled = true;
          else {
            w.agent = runs(w, scenario, w.current) ? w.current : null;
            p.progress = { ...p.progress, restartedInto: w.current };
          }
        },
      ];
    case 'exec-failure-after-switch': // row 7 fails after the switch: roll back, record ExecutionFailed, publish fails
      return [
        ...head,
        (w) => {
          w.current = PREVIOUS;
        },
        (w) => {
          w.record = withFailure(
            must(w.record),
            { reason: 'ExecutionFailed', code: 'E_IO', message: 'recording the switch failed' },
            false,
          );
        },
      ];
    case 'restart-scheduling-failed': // row 8 fails: record failure + recoveryRequired, then the startup table
      return [
        ...head,
        commitSwitch,
        (w) => {
          w.record = withFailure(
            must(w.record),
            { reason: 'DaemonFailed', code: 'E_SERVICE', message: 'scheduling the restart failed' },
            true,
          );
        },
      ];
  }
}

/** How the run observes the recover command: each decision before it is applied, and after. */
export interface RecoverHooks {
  decided(kind: string): void;
  applied(): void;
}

/** The recover command's loop over its decisions; false when it did not finish in 10. */
export function runRecoverCommand(world: World, scenario: Scenario, hooks: RecoverHooks): boolean {
  let progress = { containerCopiedFrom: null as SlotName | null, agentRestarted: false };
  const recordAtStart = world.record;
  for (let i = 0; i < 10; i += 1) {
    const d = decideRecoverCommand({
      record: world.record,
      recordAtStart,
      message: '',
      observed: { current: world.current, lastGood: world.lastGood, container: 'unknown' },
      progress,
    });
    hooks.decided(d.kind);
    switch (d.kind) {
      case 'done':
        return true;
      case 'record-failure':
        world.record = withFailure(must(world.record), d.failure, d.recoveryRequired);
        break;
      case 'roll-back':
        world.lastGood = d.to;
        world.current = d.to;
        break;
      case 'restore-container':
        if (world.nspawn !== null) world.nspawn = world.slots[d.from];
        progress = { ...progress, containerCopiedFrom: d.from };
        break;
      case 'restart-agent':
        if (scenario.mode === 'sidecar') world.agent = runs(world, scenario, world.current) ? world.current : null;
        progress = { ...progress, agentRestarted: true };
        break;
    }
    hooks.applied();
  }
  return false;
}

/** What a startup decision needs of the run besides the world: restarting and replacing the daemon. */
export interface DaemonControl {
  readonly scenario: Scenario;
  proc: Proc;
  restart(): void;
}

/** Decisions that change the host (the record, links, container, quarantine, cluster). */
function applyToHost(world: World, run: DaemonControl, d: StartupDecision): boolean {
  const { scenario, proc } = run;
  switch (d.kind) {
    case 'record-failure':
      world.record = withFailure(must(world.record), d.failure, d.recoveryRequired);
      return true;
    case 'commit-state':
      world.stateCommitted = true;
      return true;
    case 'record-completion':
      if (world.record === null) throw new Error('record-completion without a record');
      world.record = withCompleted(world.record);
      return true;
    case 'roll-back':
      world.lastGood = d.to;
      world.current = d.to;
      if (scenario.machine) proc.container = 'unknown';
      return true;
    case 'quarantine':
      if (!world.quarantine.includes(d.digest)) world.quarantine.push(d.digest);
      return true;
    case 'publish': {
      if (d.status.phase === 'Complete' && world.nspawn !== null && world.nspawn !== world.slots[world.current])
        throw new Error('I7: Complete with nspawn out of sync');
      world.publishes.push(d.status);
      const last = world.storeWrites.at(-1);
      if (last === undefined || JSON.stringify(last) !== JSON.stringify(d.status)) world.storeWrites.push(d.status);
      proc.progress = { ...proc.progress, published: true };
      return true;
    }
    default:
      return false;
  }
}

/** Decisions that measure, copy, restart or replace (the daemon's own progress). */
function applyToProcess(world: World, run: DaemonControl, d: StartupDecision): void {
  const { scenario, proc } = run;
  const invalidateContainer = (): void => {
    if (scenario.machine) proc.container = 'unknown';
  };
  switch (d.kind) {
    case 'measure-health':
      proc.health = healthOf(world, scenario, proc, d.slot);
      return;
    case 'sync-container':
      if (world.nspawn !== null && !scenario.syncBroken) world.nspawn = world.slots[d.from];
      proc.progress = { ...proc.progress, containerCopiedFrom: d.from };
      invalidateContainer();
      return;
    case 'check-container':
      proc.container =
        world.nspawn === null ? 'not-applicable' : world.nspawn === world.slots[world.current] ? 'equal' : 'differs';
      return;
    case 'restore-container':
      if (world.nspawn !== null) world.nspawn = world.slots[d.from];
      proc.progress = { ...proc.progress, containerCopiedFrom: d.from };
      invalidateContainer();
      return;
    case 'restart-into-last-good':
      world.restartScheduled = true;
      proc.progress = { ...proc.progress, restartedInto: world.current };
      return;
    case 'restart-agent':
      world.agent = runs(world, scenario, world.current) ? world.current : null;
      proc.progress = { ...proc.progress, restartedInto: d.into };
      return;
    case 'wait':
      if (!world.restartScheduled) throw new Error('waiting for a restart that was never scheduled');
      run.restart(); // the scheduled restart fires
      return;
    case 'delete-record':
      world.record = null;
      run.proc = {
        ...proc,
        progress: NO_PROGRESS,
        health: 'unknown',
        container: scenario.machine ? 'unknown' : 'not-applicable',
      };
      return;
    default:
      return;
  }
}

/** Applies one startup decision to the model (`open-gate` and `ignore-own-record` change nothing). */
export function applyStartupDecision(world: World, run: DaemonControl, d: StartupDecision): void {
  if (!applyToHost(world, run, d)) applyToProcess(world, run, d);
}
