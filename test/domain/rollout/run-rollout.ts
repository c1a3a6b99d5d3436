/** Drives a RolloutWorld with the real planner, step by step, with optional crashes and checks. */
import { expect } from 'vitest';
import type { RolloutPlan } from '../../../src/domain/fleet/decide/actions.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { PlannerMemo } from '../../../src/domain/fleet/order/planner-memo.js';
import { TERMINAL_PHASES, type AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import { ANNOTATION_APPROVE_WAVE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { isLive, type RolloutWorld } from './rollout-world.js';

export interface RunOptions {
  readonly maxSteps: number;
  /** Index of the first action lost to a crash in this step's plan, or `null` for no crash. */
  readonly crashAt?: (step: number, plan: RolloutPlan) => number | null;
  /** After a crash a successor plans at once (default); otherwise the next plan is the next step's. */
  readonly restartAtOnce?: boolean;
  /** The controller is down during this step: nothing is planned, the daemons go on. */
  readonly down?: (step: number) => boolean;
  /** Called after the controller's actions of every step. */
  readonly check?: (world: RolloutWorld) => void;
  /** Approve manual gates as soon as they are reached. */
  readonly approve?: boolean;
  /** Replan every snapshot without the memo, from a copy, and demand the same plan. */
  readonly determinism?: boolean;
  readonly label?: string;
  /** The caches show operations' statuses this many steps late. */
  readonly lagSteps?: number;
  /** Runs after the controller's actions of every step, before the daemons: deletions by hand and such. */
  readonly meddle?: (world: RolloutWorld) => void;
}

export interface RunResult {
  readonly steps: number;
  readonly status: AgentRolloutStatus;
  /** The step whose plan first recorded a halt, if any. */
  readonly haltStep: number | null;
  readonly crashes: number;
}

export function runRollout(world: RolloutWorld, options: RunOptions): RunResult {
  let haltStep: number | null = null;
  let crashes = 0;
  const label = options.label ?? `seed ${world.seed}`;
  // One controller process's memo; a successor after a crash starts with an empty one.
  let memo = new PlannerMemo();
  for (; world.step < options.maxSteps; world.advance()) {
    if (options.down?.(world.step) === true) {
      options.meddle?.(world);
      world.runDaemons();
      continue;
    }
    const snapshot = world.snapshot(options.lagSteps ?? 0);
    const plan = planRollout(snapshot, world.nowMs, memo);
    if (options.determinism === true) {
      expect(planRollout(structuredClone(snapshot), world.nowMs), `${label}: replanning step ${world.step}`).toEqual(
        plan,
      );
    }
    const stopAt = options.crashAt?.(world.step, plan) ?? null;
    world.apply(plan, stopAt ?? undefined);
    if (stopAt !== null) {
      // The controller died after applying a prefix of the plan; its successor plans again.
      crashes += 1;
      memo = new PlannerMemo();
      if (options.restartAtOnce !== false)
        world.apply(planRollout(world.snapshot(options.lagSteps ?? 0), world.nowMs, memo));
    }
    const status = world.rolloutStatus();
    if (haltStep === null && status?.halt !== undefined) haltStep = world.step;
    options.check?.(world);
    if (status !== null && quiescent(world, status)) break;
    if (options.approve === true && status?.phase === 'AwaitingApproval' && status.currentWave !== undefined) {
      world.annotations[ANNOTATION_APPROVE_WAVE] = status.currentWave;
    }
    options.meddle?.(world);
    world.runDaemons();
  }
  const status = world.rolloutStatus();
  if (status === null) throw new Error(`${label}: the planner never wrote a status`);
  return { steps: world.step, status, haltStep, crashes };
}

/** Nothing will change any more: a final phase (or a halt) with no operation still live. */
export function quiescent(world: RolloutWorld, status: AgentRolloutStatus): boolean {
  const live = [...world.operations.values()].some(
    (op) => isLive(op) && op.outcome !== 'never-start' && op.outcome !== 'hang',
  );
  return (TERMINAL_PHASES.includes(status.phase) || status.phase === 'Halted') && !live;
}
