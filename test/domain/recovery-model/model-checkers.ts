import type { Checker } from '../../sim/harness/failure.js';
import type { Outcome } from './model-run.js';
import { expectedPhase } from './model-scenarios.js';
import { CANDIDATE, DIGEST, type Scenario } from './model-world.js';

// The recovery convergence model's checkers, apart from the model: what every converged run must
// show (bounded, the record gone, I5, and I7 / I12 for the phase the scenario must end in).

export interface ConvergedRun {
  readonly scenario: Scenario;
  readonly outcome: Outcome;
  /** Startup steps a converged run may take (20 for up to two recovery crashes). */
  readonly stepsMax: number;
}

const when = (condition: boolean, problem: string): string[] => (condition ? [] : [problem]);

const boundedAndClean: Checker<ConvergedRun> = ({ outcome, stepsMax }) => [
  ...when(outcome.steps <= stepsMax, `bounded: ${outcome.steps} steps`),
  ...when(outcome.world.record === null, 'the record is gone'),
];

/** I5: exactly one terminal status per operation (a repeated publish is the same status). */
const oneTerminalStatus: Checker<ConvergedRun> = ({ scenario, outcome: { world } }) => {
  const phase = expectedPhase(scenario);
  if (phase === null) return when(world.publishes.length === 0, 'nothing to publish without a record');
  return [
    ...when(world.storeWrites.length === 1, 'exactly one distinct terminal status'),
    ...when(world.storeWrites[0]?.phase === phase, `phase ${phase}`),
  ];
};

/** I7 and the committed state: current is the healthy candidate, nspawn equal. */
const completeState: Checker<ConvergedRun> = ({ scenario, outcome: { world } }) => {
  if (expectedPhase(scenario) !== 'Complete') return [];
  return [
    ...when(world.current === CANDIDATE && world.slots[world.current] === 'v2', 'current is the candidate'),
    ...when(!scenario.machine || world.nspawn === 'v2', 'I7: nspawn equals the host binary'),
    ...when(world.stateCommitted, 'state committed'),
    ...when(world.quarantine.length === 0, 'a good candidate is not quarantined'),
  ];
};

/** I12: current is the previous binary (never the older v0, never the failed candidate). */
const failedState: Checker<ConvergedRun> = ({ scenario, outcome: { world } }) => {
  if (expectedPhase(scenario) !== 'Failed') return [];
  const execFailed = scenario.variant === 'exec-failure-after-switch' && scenario.crashAfter > 7;
  const problems = [
    ...when(world.slots[world.current] === 'v1', 'I12: current is the previous binary'),
    ...when(!scenario.machine || world.nspawn === 'v1', 'nspawn is the previous binary'),
    ...when(
      world.storeWrites[0]?.reason === (execFailed ? 'ExecutionFailed' : 'DaemonFailed'),
      'the recorded reason is published',
    ),
  ];
  // A failure before the switch never quarantines; a candidate that ran and failed is.
  if (scenario.crashAfter < 6) problems.push(...when(world.quarantine.length === 0, 'no quarantine before the switch'));
  if (scenario.variant === 'normal' && scenario.crashAfter >= 6 && scenario.behaviour !== 'good')
    problems.push(
      ...when(world.quarantine.length === 1 && world.quarantine[0] === DIGEST, 'failed candidate quarantined'),
    );
  return problems;
};

export const CONVERGENCE_CHECKERS: readonly Checker<ConvergedRun>[] = [
  boundedAndClean,
  oneTerminalStatus,
  completeState,
  failedState,
];
