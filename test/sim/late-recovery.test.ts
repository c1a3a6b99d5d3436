import { describe, expect, it } from 'vitest';
import type { HostLock, LockAttempt, LockHolder } from '../../src/ports/node/host-lock.js';
import { resolveInSnapshot } from './host-invariants.js';
import { LAYOUT, ManagedWorld, agentScript, digestOf } from './managed-world.js';

const MESSAGE = 'upgraded daemon failed repeatedly';

const currentSlot = (world: ManagedWorld) => resolveInSnapshot(world.fs.snapshot(), LAYOUT.current);
const statusOf = (world: ManagedWorld, name: string) => world.store.get(name);

/** The old daemon takes the operation up to its hand-over (self-hosted: a scheduled restart). */
async function handOver(world: ManagedWorld, name: string, parameters: { downloadURL: string; sha256: string }) {
  const operation = world.store.create({ name, parameters });
  expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({ kind: 'handed-over' });
}

/** A lock another process holds at the first try; `meanwhile` is what that process does with it. */
class LockBusyOnce implements HostLock {
  private tried = false;

  constructor(
    private readonly inner: HostLock,
    private readonly meanwhile: () => Promise<void>,
  ) {}

  async tryAcquire(): Promise<LockAttempt> {
    if (this.tried) return this.inner.tryAcquire();
    this.tried = true;
    await this.meanwhile();
    return { kind: 'busy', holder: { kind: 'known', pid: 2, command: 'agent-upgrade daemon', sinceMs: 0 } };
  }

  holder(): Promise<LockHolder | null> {
    return this.inner.holder();
  }
}

/** Operation A's candidate crash-loops: the unit failed, in the run this returns. */
async function failedUpgrade(world: ManagedWorld): Promise<string | null> {
  const crashing = world.publishRelease('2.0.0');
  world.behaviours.set(digestOf(agentScript('2.0.0')), 'crash-on-start');
  await handOver(world, 'upgrade-a', { downloadURL: crashing.url, sha256: crashing.sha256 });
  await world.services.performScheduledRestarts();
  expect(await world.services.activity()).toBe('failed');
  return world.services.currentRun();
}

/** A's failure recovered and published by last-good, then operation B handed over to its candidate. */
async function recoveredThenNext(world: ManagedWorld, failedRun: string | null): Promise<void> {
  expect(await world.daemon().recover(MESSAGE, failedRun)).toMatchObject({ recovered: true });
  await world.daemon(await world.services.mainExecutable()).start();
  expect(statusOf(world, 'upgrade-a')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
  const next = world.publishRelease('2.1.0');
  await handOver(world, 'upgrade-b', { downloadURL: next.url, sha256: next.sha256 });
}

/** B's restarted candidate starts and publishes Complete. */
async function nextCompletes(world: ManagedWorld): Promise<void> {
  expect(currentSlot(world)).toBe(LAYOUT.green);
  expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
  expect(statusOf(world, 'upgrade-b')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
}

/**
 * A recovery run that comes late (docs/protocol.md#r1a): the failure that started it was handled
 * meanwhile and the next upgrade switched, so it must not judge that upgrade's candidate.
 */
describe('a late recovery changes nothing', () => {
  it('a recovery that waited for the lock while the next upgrade switched changes nothing; that upgrade completes', async () => {
    const world = new ManagedWorld();
    await failedUpgrade(world);
    // While this recovery waits, another recovery run handles the failure, last-good publishes it,
    // and the next operation switches to its candidate.
    const meanwhile = async () => {
      await recoveredThenNext(world, null);
      switched = world.fs.snapshot()[LAYOUT.record];
    };
    let switched: unknown = undefined;
    const late = world.process(undefined, { hostLock: new LockBusyOnce(world.lock, meanwhile) });
    expect(await late.recover({ message: MESSAGE, failedRun: null })).toEqual({
      ok: true,
      value: { recovered: false, rolledBackTo: null },
    });
    expect(switched).toBeDefined();
    expect(world.fs.snapshot()[LAYOUT.record]).toEqual(switched);
    await world.services.performScheduledRestarts();
    await nextCompletes(world);
  });

  it('run after the next candidate started, it sees the failed run is not the current one', async () => {
    const world = new ManagedWorld();
    const failedRun = await failedUpgrade(world);
    expect(failedRun).not.toBeNull();
    await recoveredThenNext(world, failedRun);
    await world.services.performScheduledRestarts();
    const switched = world.fs.snapshot()[LAYOUT.record];

    // Read after the switch, the record alone cannot tell: the unit's run can.
    expect(await world.daemon().recover(MESSAGE, failedRun)).toEqual({ recovered: false, rolledBackTo: null });
    expect(world.fs.snapshot()[LAYOUT.record]).toEqual(switched);
    await nextCompletes(world);
  });
});
