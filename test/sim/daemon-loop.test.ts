import { describe, expect, it } from 'vitest';
import type { DaemonExit } from '../../src/app/node/daemon/run-daemon.js';
import type { Result } from '../../src/domain/common/failure.js';
import { SteppedClock } from '../support/stepped-clock.js';
import { resolveInSnapshot } from './host-invariants.js';
import { CONFIG, LAYOUT, ManagedWorld } from './managed-world.js';

/**
 * The production daemon loop (`Upgrader.daemon`: gate, watch, work queue, retries) on the memory
 * platform, with every wait on a stepped virtual clock the test moves forward.
 */
function startDaemon(world: ManagedWorld, clock: SteppedClock, selfExecutable: string | null) {
  const stop = new AbortController();
  const upgrader = world.process(CONFIG, { clock });
  let exit: Result<DaemonExit> | null = null;
  const running = upgrader.daemon(stop.signal, { selfExecutable }).then((result) => {
    exit = result;
    return result;
  });
  return { stop: () => stop.abort(), running, exited: () => exit !== null };
}

describe('the daemon loop on virtual time', () => {
  it('takes an operation from the watch, hands over, and the restarted daemon publishes Complete', async () => {
    const world = new ManagedWorld();
    const clock = new SteppedClock();
    await world.services.restart();
    const first = startDaemon(world, clock, await world.services.mainExecutable());
    const release = world.publishRelease('2.0.0');
    world.store.create({ name: 'up', parameters: { downloadURL: release.url, sha256: release.sha256 } });
    await clock.runUntil(() => world.services.scheduledRestarts > 0);
    first.stop();
    expect((await first.running).ok).toBe(true);

    await world.services.performScheduledRestarts();
    const restarted = startDaemon(world, clock, await world.services.mainExecutable());
    await clock.runUntil(() => world.store.get('up')?.phase === 'Complete');
    restarted.stop();
    expect(await restarted.running).toEqual({ ok: true, value: { kind: 'stopped' } });
    expect(resolveInSnapshot(world.fs.snapshot(), LAYOUT.current)).toBe(LAYOUT.green);
    expect(world.store.terminalWrites('up')).toBe(1);
  });

  it('a requeued operation is read again: one finished meanwhile is not started', async () => {
    const world = new ManagedWorld();
    const clock = new SteppedClock();
    await world.services.restart();
    const daemon = startDaemon(world, clock, await world.services.mainExecutable());
    await clock.runUntil(() => world.store.requestCount.watch > 0);
    // A direct activation holds the host lock when the operation arrives: it is requeued.
    const held = await world.lock.tryAcquire({ pid: 77, command: 'agent-upgrade activate' });
    if (held.kind !== 'acquired') throw new Error('the lock should be free');
    const release = world.publishRelease('2.0.0');
    const ref = world.store.create({ name: 'up', parameters: { downloadURL: release.url, sha256: release.sha256 } });
    // Handled, refused by the busy lock and put back: the retry sleeps on the clock.
    await clock.runUntil(() => clock.sleepers > 0);
    // Meanwhile the operation is finished elsewhere (an operator gave up on it).
    await world.store.publish(ref, { phase: 'Failed', reason: 'ExecutionFailed', message: 'cancelled' });
    await held.lease.release();
    const before = world.fs.snapshot();
    const reads = world.store.requestCount.read;
    await clock.runUntil(() => world.store.requestCount.read > reads);
    await clock.runUntil(() => true);
    daemon.stop();
    expect(await daemon.running).toEqual({ ok: true, value: { kind: 'stopped' } });
    expect(world.fs.snapshot()).toEqual(before);
    expect(world.store.get('up')).toMatchObject({ phase: 'Failed', message: 'cancelled' });
    expect(world.store.history('up').map((entry) => entry.phase)).toEqual(['Failed']);
  });
});

describe('a self-hosted daemon outside the slots', () => {
  it('is refused by the library with E_CONFIG before it touches the host', async () => {
    const world = new ManagedWorld();
    await world.services.restart();
    const before = world.fs.snapshot();
    const stop = new AbortController();
    const result = await world.process(CONFIG).daemon(stop.signal, { selfExecutable: '/opt/elsewhere/agent' });
    expect(result).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
    expect(world.fs.snapshot()).toEqual(before);
    expect(world.store.requestCount.watch).toBe(0);
  });
});

describe('credentials the cluster keeps refusing', () => {
  async function handedOver(world: ManagedWorld): Promise<void> {
    await world.services.restart();
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'up', parameters });
    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({
      kind: 'handed-over',
    });
    await world.services.performScheduledRestarts();
  }

  it('end the daemon with E_CLUSTER_AUTH when the startup gate cannot publish; the record stays', async () => {
    const world = new ManagedWorld();
    await handedOver(world);
    world.store.failTimes('publish', 20, { status: 401, code: 'unauthorized' });
    const clock = new SteppedClock();
    const daemon = startDaemon(world, clock, await world.services.mainExecutable());
    await clock.runUntil(daemon.exited);
    expect(await daemon.running).toMatchObject({ ok: false, failure: { code: 'E_CLUSTER_AUTH' } });
    expect(await world.fs.lstat(LAYOUT.record)).not.toBeNull();
    expect(world.store.get('up')?.phase).toBe('InProgress');
  });

  it('while a server error only keeps the gate retrying', async () => {
    const world = new ManagedWorld();
    await handedOver(world);
    world.store.failTimes('publish', 20, { status: 503 });
    const clock = new SteppedClock();
    const daemon = startDaemon(world, clock, await world.services.mainExecutable());
    await clock.runUntil(() => world.store.requestCount.publish >= 10);
    expect(daemon.exited()).toBe(false);
    world.store.clearFaults();
    await clock.runUntil(() => world.store.get('up')?.phase === 'Complete');
    daemon.stop();
    expect(await daemon.running).toEqual({ ok: true, value: { kind: 'stopped' } });
  });
});
