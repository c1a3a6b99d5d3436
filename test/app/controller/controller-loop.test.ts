/**
 * ControllerLoop over the in-memory API server on virtual time: informers first, reconciles once
 * the caches are filled, backoff after a cluster failure, and the failures that end the loop.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_EPOCH_MS } from '../../../src/adapters/common/memory/memory-clock.js';
import { ControllerLoop, type LoopSettings } from '../../../src/app/fleet/controller/controller-loop.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { planReleaseStatus } from '../../../src/domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import { SteppedClock } from '../../support/stepped-clock.js';
import { populatedServer, quietLogger, quietMetrics, rolloutObject, ROLLOUT, runSpec } from './controller-fixtures.js';
import type { FakeApiServer } from './fake-api-server.js';

const LOOP: LoopSettings = {
  resyncMs: 300_000,
  retryDelayMs: 1_000,
  retryDelayMaxMs: 60_000,
  settleMs: 0,
};
const LIST_MS = 5_000;

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

function start() {
  const clock = new SteppedClock();
  const server = populatedServer(clock);
  server.listDelayMs.operations = LIST_MS;
  const loop = new ControllerLoop({
    cluster: server.client('loop'),
    clock,
    logger: quietLogger(),
    metrics: quietMetrics,
    settings: LOOP,
  });
  const stop = new AbortController();
  stops.push(stop);
  let ended: { error: unknown } | null = null;
  void loop.run(stop.signal).then(
    () => (ended = { error: null }),
    (error: unknown) => (ended = { error }),
  );
  return { clock, server, loop, stop, ended: () => ended };
}

const elapsed = (clock: SteppedClock): number => clock.nowMs() - DEFAULT_EPOCH_MS;

/** Every child exists and the status announces no more: the rollout's first wave is out. */
function converged(server: FakeApiServer, loop: ControllerLoop): boolean {
  const status = server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus | undefined;
  const announced = (status?.waves ?? []).flatMap((wave) => wave.pendingCreates);
  return loop.idle && server.list('operations').length === 3 && status !== undefined && announced.length === 0;
}

/** Gives the releases the status the controller would write, so their reconciles write nothing. */
function validateReleases(server: FakeApiServer, clock: SteppedClock): void {
  for (const release of server.list('releases'))
    server.put('releases', { ...release, status: planReleaseStatus(release, clock.nowMs())?.status });
}

function createdOnce(server: FakeApiServer): boolean {
  const names = server.writes.filter((write) => write.kind === 'create').map((write) => write.name);
  return names.length === 3 && new Set(names).size === 3;
}

describe('ControllerLoop', () => {
  it('reconciles only once every informer has listed, then converges and stays quiet', async () => {
    const { clock, server, loop } = start();
    await clock.runUntil(() => {
      if (!loop.cache.synced) expect(server.writes).toEqual([]);
      return converged(server, loop);
    }, 200);
    expect(server.writes[0]?.atMs).toBe(DEFAULT_EPOCH_MS + LIST_MS);
    expect(createdOnce(server)).toBe(true);
    // A resync later (and before the children time out) nothing has changed, so nothing is written.
    const writes = server.writes.length;
    const untilMs = clock.nowMs() + LOOP.resyncMs + 1_000;
    void clock.sleep(LOOP.resyncMs + 1_000);
    await clock.runUntil(() => clock.nowMs() >= untilMs, 200);
    expect(server.writes).toHaveLength(writes);
  });

  it('a ClusterError backs off, doubling, and the reconcile is retried until it holds', async () => {
    const { clock, server, loop } = start();
    validateReleases(server, clock);
    for (let nth = 1; nth <= 3; nth += 1)
      server.faultAt(nth, new ClusterError(503, 'Service Unavailable'), 'rolloutStatus');
    await clock.runUntil(() => converged(server, loop), 200);
    // Refused at 5 s, then after 1 s, 2 s and 4 s: the first status update to land is at 12 s.
    const landed = server.writes.find((write) => write.kind === 'rolloutStatus');
    expect(landed?.atMs).toBe(DEFAULT_EPOCH_MS + LIST_MS + 7_000);
    expect(createdOnce(server)).toBe(true);
  });

  it('a ClusterError halfway through a plan: the rest is planned again and each child is created once', async () => {
    const { clock, server, loop } = start();
    server.faultAt(2, new ClusterError(null, 'connection reset'), 'create');
    await clock.runUntil(() => converged(server, loop), 200);
    expect(createdOnce(server)).toBe(true);
  });

  it('a change seen by the watch is reconciled', async () => {
    const { clock, server, loop } = start();
    await clock.runUntil(() => converged(server, loop), 200);
    server.put('rollouts', rolloutObject('second', runSpec({ state: 'Preview' })));
    await clock.runUntil(() => server.get('rollouts', 'second')?.status !== undefined && loop.idle, 200);
    expect(elapsed(clock)).toBeLessThan(LOOP.resyncMs);
    expect((server.get('rollouts', 'second')?.status as AgentRolloutStatus).phase).toBe('Preview');
  });

  it('an aborted rollout counts the operations it left running until none is live', async () => {
    const { clock, server, loop } = start();
    await clock.runUntil(() => converged(server, loop), 200);
    const daemon = (phase: 'InProgress' | 'Complete'): void => {
      for (const op of server.list('operations'))
        server.put('operations', {
          ...op,
          phase,
          startedMs: clock.nowMs(),
          completedMs: phase === 'Complete' ? clock.nowMs() : null,
        });
    };
    const status = (): AgentRolloutStatus | undefined =>
      server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus | undefined;
    daemon('InProgress');
    const rollout = server.get('rollouts', ROLLOUT)!;
    server.put('rollouts', { ...rollout, generation: 2, spec: runSpec({ state: 'Abort' }) });
    await clock.runUntil(() => status()?.phase === 'Aborted' && loop.idle, 200);
    expect(status()?.counts).toMatchObject({ inFlight: 3, succeeded: 0 });
    daemon('Complete');
    await clock.runUntil(() => status()?.counts.inFlight === 0 && loop.idle, 200);
    expect(status()).toMatchObject({ phase: 'Aborted', progress: '3/3', counts: { succeeded: 3 } });
  });

  it('ends when its signal aborts', async () => {
    const { clock, server, loop, stop, ended } = start();
    await clock.runUntil(() => converged(server, loop), 200);
    stop.abort();
    await clock.runUntil(() => ended() !== null, 20);
    expect(ended()).toEqual({ error: null });
  });

  it('refused credentials end the informers and the loop with the ClusterError', async () => {
    const { clock, server, loop, ended } = start();
    await clock.runUntil(() => converged(server, loop), 200);
    server.failInformers(new ClusterError(401, 'x', 'unauthorized'));
    await clock.runUntil(() => ended() !== null, 20);
    expect(ended()?.error).toMatchObject({ name: 'ClusterError', code: 'unauthorized' });
  });

  it('a failure that is not the cluster’s is a defect: the loop crashes with it', async () => {
    const { clock, server, ended } = start();
    server.faultAt(1, new TypeError('a bug'), 'rolloutStatus');
    await clock.runUntil(() => ended() !== null, 50);
    expect(ended()?.error).toBeInstanceOf(TypeError);
  });
});
