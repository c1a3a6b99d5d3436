import type { Sha256 } from '../../../src/domain/common/digest.js';
import {
  NO_PROGRESS,
  type AgentMode,
  type CandidateHealth,
  type ContainerVerdict,
  type RunProgress,
  type StartupInput,
  type TerminalOutcome,
} from '../../../src/domain/node/recovery/recovery-vocabulary.js';
import type { SlotName } from '../../../src/domain/node/layout/slot.js';
import { newUpgradeRecord, type UpgradeRecord } from '../../../src/domain/node/record/upgrade-record.js';
import { NO_RESTART_OBSERVATION } from '../../../src/domain/node/recovery/watch-rules.js';

// The model host of the recovery convergence simulation: a tiny world the policy's decisions are
// interpreted against (model-interpreter.ts), and the start states it is enumerated over.

export type Binary = 'v0' | 'v1' | 'v2'; // v0: an older release, v1: the running release, v2: the candidate
export type Behaviour = 'good' | 'unhealthy' | 'crashing';
export type Variant = 'normal' | 'exec-failure-after-switch' | 'restart-scheduling-failed';

export const DIGEST = 'c'.repeat(64) as Sha256;
export const CANDIDATE: SlotName = 'green';
export const PREVIOUS: SlotName = 'blue';

export interface Scenario {
  readonly variant: Variant;
  readonly crashAfter: number; // managed-path effects applied before the old daemon dies (Infinity: none)
  readonly mode: AgentMode;
  readonly behaviour: Behaviour;
  readonly machine: boolean;
  readonly syncBroken: boolean;
  readonly lastGoodInitial: SlotName;
  /** Startup-loop steps after which the daemon crashes (a new one starts). */
  readonly recoveryCrashes: ReadonlySet<number>;
}

export interface World {
  record: UpgradeRecord | null;
  slots: Record<SlotName, Binary>;
  current: SlotName;
  lastGood: SlotName;
  nspawn: Binary | null;
  agent: SlotName | null;
  quarantine: Sha256[];
  stateCommitted: boolean;
  publishes: TerminalOutcome[];
  /** Store writes that changed something (publishing the same status again is a no-op). */
  storeWrites: TerminalOutcome[];
  restartScheduled: boolean;
}

export interface Proc {
  instanceId: string;
  self: SlotName | null;
  health: CandidateHealth;
  container: ContainerVerdict;
  progress: RunProgress;
}

export function initialWorld(scenario: Scenario): World {
  return {
    record: null,
    slots: { blue: 'v1', green: 'v0' },
    current: PREVIOUS,
    lastGood: scenario.lastGoodInitial,
    nspawn: scenario.machine ? 'v1' : null,
    agent: scenario.mode === 'sidecar' ? PREVIOUS : null,
    quarantine: [],
    stateCommitted: false,
    publishes: [],
    storeWrites: [],
    restartScheduled: false,
  };
}

let instanceCounter = 0;
export function newInstanceId(): string {
  instanceCounter += 1;
  return instanceCounter.toString(16).padStart(32, '0');
}

/** Whether the binary in `slot` keeps running (a crashing candidate does not). */
export function runs(world: World, scenario: Scenario, slot: SlotName): boolean {
  return !(world.slots[slot] === 'v2' && scenario.behaviour === 'crashing');
}

export function healthOf(world: World, scenario: Scenario, proc: Proc, slot: SlotName): CandidateHealth {
  const running = scenario.mode === 'self-hosted' ? proc.self : world.agent;
  if (running !== slot) return 'unhealthy';
  return world.slots[slot] === 'v2' && scenario.behaviour !== 'good' ? 'unhealthy' : 'healthy';
}

export function freshProc(world: World, scenario: Scenario, instanceId = newInstanceId()): Proc {
  return {
    instanceId,
    self: scenario.mode === 'self-hosted' ? world.current : null,
    health: 'unknown',
    container: scenario.machine ? 'unknown' : 'not-applicable',
    progress: NO_PROGRESS,
  };
}

export function created(instanceId: string): UpgradeRecord {
  const result = newUpgradeRecord({
    operationName: 'upgrade-1',
    operationUid: null,
    instanceId,
    activeMachine: 'kube1',
  });
  if (!result.ok) throw new Error(result.failure.message);
  return result.value;
}

export function must(record: UpgradeRecord | null): UpgradeRecord {
  if (record === null) throw new Error('model: no record');
  return record;
}

/** What the startup policy is asked, as a daemon would observe the model host. */
export function startupInput(world: World, scenario: Scenario, proc: Proc): StartupInput {
  return {
    record: world.record,
    mode: scenario.mode,
    instanceId: proc.instanceId,
    observed: {
      current: world.current,
      lastGood: world.lastGood,
      self: proc.self,
      agent: world.agent,
      candidateHealth: proc.health,
      container: proc.container,
      quarantined: world.quarantine.includes(DIGEST),
      stateCommitted: world.stateCommitted,
      restarts: NO_RESTART_OBSERVATION,
    },
    progress: proc.progress,
    watch: null,
    watchMs: 0,
  };
}
