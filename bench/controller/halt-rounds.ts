/**
 * The controller benchmark's halt rounds: a rollout whose first canary fails, timed from that
 * failure's status write to the rollout showing `Halted`.
 */
import type { DaemonOutcome, FleetMachine } from '../../test/sim/fleet/fleet-daemons.js';
import { HALT_VERSION, haltRolloutSpec } from './bench-specs.js';
import { type BenchWorld, waitUntil } from './bench-world.js';

export interface HaltRound {
  readonly ms: number;
  /** How long the controller had been quiet about this rollout before the failure was written. */
  readonly quietBeforeMs: number;
  readonly reason: string;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Daemon outcomes: the fleet's release always succeeds; in each halt round the first canary fails and the others hang. */
export class Behaviour {
  private haltCalls = 0;

  nextRound(): void {
    this.haltCalls = 0;
  }

  outcome = (_machine: FleetMachine, target: string): DaemonOutcome => {
    if (target !== HALT_VERSION) return 'Succeeded';
    this.haltCalls += 1;
    return this.haltCalls === 1 ? 'DaemonFailed' : 'hang';
  };
}

/** `rounds` halt rounds, one after another. */
export async function runHaltRounds(world: BenchWorld, behaviour: Behaviour, rounds: number): Promise<HaltRound[]> {
  const halts: HaltRound[] = [];
  for (let round = 0; round < rounds; round += 1) halts.push(await haltRound(world, behaviour, round));
  return halts;
}

/**
 * One rollout whose first canary fails (DaemonFailed, budget 0): from the answer to the daemon's
 * status write of Failed to the watch event showing the rollout Halted.
 */
async function haltRound(world: BenchWorld, behaviour: Behaviour, round: number): Promise<HaltRound> {
  const name = `halt-${round}`;
  behaviour.nextRound();
  const failedBefore = world.daemonHttp.failedAnswers.length;
  await world.createRollout(name, haltRolloutSpec());
  await waitUntil(() => world.daemonHttp.failedAnswers.length > failedBefore, 30_000, `a canary of ${name} to fail`, 5);
  const failed = world.daemonHttp.failedAnswers[failedBefore] as { atMs: number };
  const before = (world.rollouts.get(name)?.eventsMs ?? []).filter((atMs) => atMs < failed.atMs);
  const quietBeforeMs = failed.atMs - (before.at(-1) ?? failed.atMs);
  await waitUntil(() => world.phaseOf(name) === 'Halted', 30_000, `${name} to halt`, 5);
  const seen = world.rollouts.get(name);
  const haltedMs = seen?.phases.get('Halted') ?? Number.NaN;
  if (!(haltedMs >= failed.atMs)) throw new Error(`${name} was Halted before its canary failed`);
  const reason = String((seen?.status?.['halt'] as { reason?: unknown } | undefined)?.reason ?? '');
  world.deleteRollout(name);
  await sleep(500);
  return { ms: haltedMs - failed.atMs, quietBeforeMs, reason };
}
