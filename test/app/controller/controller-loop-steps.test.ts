/**
 * ControllerLoop dispatching a wave larger than one step (MAX_PENDING_CREATES): each step's plan
 * follows the last as soon as the caches show that step's creates, without waiting out the
 * settle window; with `planOnOwnWrites: false` every step waits it out, as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ControllerLoop } from '../../../src/app/fleet/controller/controller-loop.js';
import { MAX_PENDING_CREATES } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import { SteppedClock } from '../../support/stepped-clock.js';
import { allAtOnceSpec, populatedServer, quietLogger, quietMetrics, ROLLOUT } from './controller-fixtures.js';

const SETTLE_MS = 250;
const MACHINES = 2 * MAX_PENDING_CREATES + 50;

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

/** A rollout of one wave over every machine at once; the loop run until every child exists. */
async function dispatch(planOnOwnWrites: boolean | undefined) {
  const clock = new SteppedClock();
  const server = populatedServer(clock, MACHINES, allAtOnceSpec());
  const loop = new ControllerLoop({
    cluster: server.client('loop'),
    clock,
    logger: quietLogger(),
    metrics: quietMetrics,
    settings: {
      resyncMs: 300_000,
      retryDelayMs: 1_000,
      retryDelayMaxMs: 60_000,
      settleMs: SETTLE_MS,
      ...(planOnOwnWrites === undefined ? {} : { planOnOwnWrites }),
    },
  });
  const stop = new AbortController();
  stops.push(stop);
  void loop.run(stop.signal);
  const announced = (): number =>
    ((server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus | undefined)?.waves ?? []).flatMap(
      (entry) => entry.pendingCreates,
    ).length;
  await clock.runUntil(() => server.list('operations').length === MACHINES && announced() === 0 && loop.idle, 2_000);
  const creates = server.writes.filter((write) => write.kind === 'create');
  return { creates, startMs: Math.min(...creates.map((write) => write.atMs)) };
}

describe('a wave of more than one step', () => {
  it('plans each next step as soon as the caches show the last one, each child created once', async () => {
    const { creates, startMs } = await dispatch(undefined);
    expect(new Set(creates.map((write) => write.name)).size).toBe(MACHINES);
    expect(creates).toHaveLength(MACHINES);
    // Three steps (100, 100, 50), none waiting out the settle window.
    expect(Math.max(...creates.map((write) => write.atMs)) - startMs).toBeLessThan(SETTLE_MS);
  });

  it('planOnOwnWrites false: every step waits out the settle window first', async () => {
    const { creates, startMs } = await dispatch(false);
    expect(creates).toHaveLength(MACHINES);
    const steps = new Set(creates.map((write) => write.atMs - startMs));
    expect([...steps].sort((a, b) => a - b)).toEqual([0, SETTLE_MS, 2 * SETTLE_MS]);
  });
});
