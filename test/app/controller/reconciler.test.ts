/**
 * Reconciler over an in-memory API server, the test playing the informers: the order of a plan's
 * writes, what a refused or failed write leaves behind, and the stale-cache wait.
 */
import { describe, expect, it } from 'vitest';
import { OWN_WRITE_MEMORY_MS } from '../../../src/app/fleet/controller/own-writes.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import type { AgentReleaseStatus } from '../../../src/domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import type { FakeApiServer } from './fake-api-server.js';
import { RELEASE, ROLLOUT } from './controller-fixtures.js';
import { reconcilerWorld } from './reconciler-world.js';

const setUp = (size?: number, createBatchMax?: number) =>
  reconcilerWorld(size, createBatchMax === undefined ? {} : { createBatchMax });

const kinds = (server: FakeApiServer): string[] => server.writes.map((write) => write.kind);
const createdNames = (server: FakeApiServer): string[] =>
  server.writes.filter((write) => write.kind === 'create').map((write) => write.name);
const rolloutStatus = (server: FakeApiServer): AgentRolloutStatus | undefined =>
  server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus | undefined;
const announced = (status: AgentRolloutStatus | undefined): string[] =>
  (status?.waves ?? []).flatMap((wave) => wave.pendingCreates);

describe('a rollout reconcile', () => {
  it('writes the status announcing the creates first, then the creates, then the events', async () => {
    const { server, reconciler } = setUp();
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'applied' });
    const first = server.writes[0];
    expect(first?.kind).toBe('rolloutStatus');
    const pending = announced(first?.status as AgentRolloutStatus);
    expect(pending).toHaveLength(3);
    expect(kinds(server)).toEqual(['rolloutStatus', 'create', 'create', 'create', 'event', 'event']);
    expect(createdNames(server)).toEqual(pending);
    expect(
      server
        .list('operations')
        .map((operation) => operation.machineRef)
        .sort(),
    ).toEqual(['node-000', 'node-001', 'node-002']);
  });

  it('a conflict on the status update sends no create', async () => {
    const { server, reconciler } = setUp();
    server.faultAt(1, 'conflict');
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'conflict' });
    expect(server.writes).toEqual([]);
    expect(server.list('operations')).toEqual([]);
  });

  it('a stale resourceVersion in the cache is the same conflict: nothing is created', async () => {
    const { server, reconciler } = setUp();
    server.put('rollouts', { ...server.get('rollouts', ROLLOUT)!, annotations: { touched: 'yes' } });
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'conflict' });
    expect(server.list('operations')).toEqual([]);
  });

  it('a refused create ends its batch and the reconcile: the creates sent with it land, no later batch goes out', async () => {
    const { server, reconciler } = setUp(7);
    // Batches 1, 2, 4: the second create (write 3) is refused; the third, sent with it, lands.
    server.faultAt(3, new ClusterError(503, 'Service Unavailable'));
    await expect(reconciler.reconcile(`rollout/${ROLLOUT}`)).rejects.toMatchObject({
      name: 'ClusterError',
      status: 503,
    });
    const pending = announced(rolloutStatus(server));
    expect(pending).toHaveLength(7);
    expect(createdNames(server).sort()).toEqual([pending[0], pending[2]].sort());
    expect(server.list('operations')).toHaveLength(2);
    expect(kinds(server)).not.toContain('event');
  });

  it('a refused first create sends nothing more: the slow start begins with one', async () => {
    const { server, reconciler } = setUp(7);
    server.faultAt(2, new ClusterError(500, 'Internal Server Error'));
    await expect(reconciler.reconcile(`rollout/${ROLLOUT}`)).rejects.toMatchObject({ status: 500 });
    expect(announced(rolloutStatus(server))).toHaveLength(7);
    expect(server.list('operations')).toEqual([]);
  });

  it('with a batch cap of one the creates go one at a time: a refusal stops the very next one', async () => {
    const { server, reconciler } = setUp(7, 1);
    server.faultAt(4, new ClusterError(503, 'Service Unavailable'));
    await expect(reconciler.reconcile(`rollout/${ROLLOUT}`)).rejects.toMatchObject({ status: 503 });
    expect(createdNames(server)).toEqual(announced(rolloutStatus(server)).slice(0, 2));
  });

  it('a create answered "exists" counts as done: the creates after it still happen', async () => {
    const { server, reconciler } = setUp();
    server.faultAt(2, 'exists');
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'applied' });
    const pending = announced(rolloutStatus(server));
    expect(createdNames(server)).toEqual(pending.slice(1));
    expect(kinds(server).slice(-2)).toEqual(['event', 'event']);
  });

  it('"exists" answers within a batch are success: every later batch still goes out', async () => {
    const { server, reconciler } = setUp(7);
    // The first create, and both of the second batch, find their names taken.
    for (const nth of [1, 2, 3]) server.faultAt(nth, 'exists', 'create');
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'applied' });
    expect(createdNames(server)).toEqual(announced(rolloutStatus(server)).slice(3));
    expect(kinds(server).slice(-2)).toEqual(['event', 'event']);
  });

  it('an event that cannot be recorded stops nothing: the next one is still sent', async () => {
    const { server, reconciler } = setUp();
    server.faultAt(5, new ClusterError(503, 'Service Unavailable'));
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'applied' });
    expect(kinds(server)).toEqual(['rolloutStatus', 'create', 'create', 'create', 'event']);
  });

  it('a second reconcile from the same cache waits for the watch and writes nothing', async () => {
    const { server, reconciler, clock } = setUp();
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    const writes = server.writes.length;
    clock.advance(5_000);
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'waiting' });
    expect(server.writes).toHaveLength(writes);
  });

  it('a watch that never comes is waited for only so long: then it plans again (and is refused)', async () => {
    const { server, reconciler, clock } = setUp();
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    const writes = server.writes.length;
    clock.advance(OWN_WRITE_MEMORY_MS);
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'conflict' });
    expect(server.writes).toHaveLength(writes);
  });

  it('once the watch brings the new version it plans again, and a plan that only wrote its status is not echoed', async () => {
    const { server, reconciler, cache, clock } = setUp();
    await reconciler.reconcile(`rollout/${ROLLOUT}`);
    for (let round = 0; round < 2; round += 1) {
      server.listInto(cache);
      clock.advance(1_000);
      expect(await reconciler.reconcile(`rollout/${ROLLOUT}`), `round ${round}`).toMatchObject({ outcome: 'applied' });
    }
    // The second plan changed nothing but its own status: with only that new in the caches,
    // planning again would echo it, so the reconciler waits for a change.
    const [rollout] = server.list('rollouts');
    if (rollout !== undefined) cache.apply({ type: 'upsert', kind: 'rollouts', object: rollout });
    clock.advance(1_000);
    expect(await reconciler.reconcile(`rollout/${ROLLOUT}`)).toMatchObject({ outcome: 'waiting' });
    expect(server.list('operations')).toHaveLength(3);
    expect(announced(rolloutStatus(server))).toEqual([]);
    // The last rounds changed nothing: no write, no second create of anything.
    expect(kinds(server).filter((kind) => kind === 'rolloutStatus')).toHaveLength(2);
    expect(createdNames(server)).toHaveLength(3);
  });

  it('a rollout gone from the cache is gone, with no write', async () => {
    const { server, reconciler } = setUp();
    expect(await reconciler.reconcile('rollout/elsewhere')).toMatchObject({ outcome: 'gone', requeueAfterMs: null });
    expect(server.writes).toEqual([]);
  });
});

describe('a release reconcile', () => {
  it('writes the Validated condition once', async () => {
    const { server, reconciler, cache } = setUp();
    expect(await reconciler.reconcile(`release/${RELEASE}`)).toMatchObject({ outcome: 'applied' });
    server.listInto(cache);
    expect(await reconciler.reconcile(`release/${RELEASE}`)).toMatchObject({ outcome: 'applied' });
    const written = server.writes.filter((write) => write.kind === 'releaseStatus');
    expect(written.map((write) => write.name)).toEqual([RELEASE]);
    const status = server.get('releases', RELEASE)?.status as AgentReleaseStatus;
    expect(status.conditions.map((condition) => [condition.type, condition.status])).toEqual([
      ['Validated', 'True'],
      ['Quarantined', 'False'],
    ]);
  });

  it('a refused release status update is a conflict to retry', async () => {
    const { server, reconciler } = setUp();
    server.faultAt(1, 'conflict');
    expect(await reconciler.reconcile(`release/${RELEASE}`)).toMatchObject({ outcome: 'conflict' });
    expect(server.writes).toEqual([]);
  });

  it('a release gone from the cache is gone', async () => {
    const { reconciler } = setUp();
    expect(await reconciler.reconcile('release/agent-0.0.1')).toMatchObject({ outcome: 'gone' });
  });
});
