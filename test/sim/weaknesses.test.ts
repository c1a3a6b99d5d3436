/**
 * One test per rule of docs/protocol.md#rules-that-close-known-weaknesses. Each scenario is one
 * where the reference behaviour (described in the comment) breaks the rule, and asserts the
 * outcome the rule demands.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedCrash } from '../../src/adapters/node/memory/memory-file-system.js';
import { resolveInSnapshot } from './host-invariants.js';
import { simProcess } from './sim-process.js';
import { agentScript, CONFIG, digestOf, LAYOUT, ManagedWorld } from './managed-world.js';

async function upgrade(world: ManagedWorld, version: string, name: string): Promise<void> {
  const release = world.publishRelease(version);
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name, parameters });
  expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({ kind: 'handed-over' });
  await world.services.performScheduledRestarts();
  expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
  expect(world.store.get(name)?.phase).toBe('Complete');
}

const currentOf = (world: ManagedWorld): string | null => resolveInSnapshot(world.fs.snapshot(), LAYOUT.current);

describe('protocol rules that fix the reference’s weaknesses', () => {
  it('publish before delete: a failed upgrade whose Failed status cannot be published keeps its record until it is (reference: Abort deleted first, the operation stayed InProgress forever)', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: '0'.repeat(64) };
    const operation = world.store.create({ name: 'mismatch', parameters });
    world.store.failTimes('publish', 1, { status: 500 });

    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({ kind: 'gate' });
    expect(world.store.get('mismatch')?.phase).toBe('InProgress');
    expect(await world.fs.lstat(LAYOUT.record)).not.toBeNull();

    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.store.get('mismatch')).toMatchObject({ phase: 'Failed', reason: 'ExecutionFailed' });
    expect(world.store.terminalWrites('mismatch')).toBe(1);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
  });

  it('never downgrade: recover after a crash before the switch leaves the valid current binary alone (reference: recordFailure set recoveryRequired and rolled back to an older last-good)', async () => {
    // Find the FS op that switches current during a second upgrade, on an identical world.
    const probe = new ManagedWorld();
    await upgrade(probe, '2.0.0', 'first');
    const before = probe.fs.opCount;
    await upgrade(probe, '3.0.0', 'second');
    const switchOp = probe.fs.journal.find(
      (entry) => entry.index >= before && entry.op === 'rename' && entry.path === LAYOUT.current,
    );
    expect(switchOp).toBeDefined();

    const world = new ManagedWorld();
    await upgrade(world, '2.0.0', 'first');
    expect(currentOf(world)).toBe(LAYOUT.green);
    world.fs.crashAt(switchOp?.index ?? -1);
    const release = world.publishRelease('3.0.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'second', parameters });
    await expect(world.daemon().handler.handle({ operation, phase: null, parameters })).rejects.toBeInstanceOf(
      SimulatedCrash,
    );
    await world.reboot('prefix');

    // An OnFailure-triggered recover while the record names a candidate that never became current.
    await world.daemon().recover('the agent crashed');
    expect(currentOf(world)).toBe(LAYOUT.green);
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.store.get('second')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(currentOf(world)).toBe(LAYOUT.green);
    const current = world.fs.snapshot()[LAYOUT.green];
    expect(current?.kind === 'file' ? current.sha256 : null).toBe(digestOf(agentScript('2.0.0')));
  });

  it('rollback is retry-safe: after the host link was restored and the nspawn copy failed, a retry still restores the copy (reference: the retry saw the candidate no longer current and skipped nspawn)', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    world.behaviours.set(digestOf(agentScript('2.0.0')), 'crash-on-start');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'looping', parameters });
    await world.daemon().handler.handle({ operation, phase: null, parameters });
    await world.services.performScheduledRestarts();

    world.container.failNext('install');
    await expect(world.daemon().recover('crash loop')).rejects.toBeDefined();
    expect(currentOf(world)).toBe(LAYOUT.blue);
    await world.daemon().recover('crash loop');

    expect((await world.container.digest('kube1'))?.sha256).toBe(digestOf(agentScript('1.0.0')));
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.store.get('looping')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
  });

  it('the gate cannot stay closed forever: a failing cluster leaves a visible stuck state that a later run resolves (reference: retried every 10 s forever with all work blocked)', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'vanishing', parameters });
    await world.daemon().handler.handle({ operation, phase: null, parameters });
    await world.services.performScheduledRestarts();

    world.store.failTimes('publish', 100, { status: 503 });
    const stuck = await world.daemon(await world.services.mainExecutable()).start();
    expect(stuck.kind).toBe('stuck');
    expect(await world.fs.lstat(LAYOUT.record)).not.toBeNull();
    expect(world.logger.lines.some((line) => line.level === 'error')).toBe(true);

    world.store.clearFaults('publish');
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.store.get('vanishing')).toMatchObject({ phase: 'Complete' });
    expect(world.store.terminalWrites('vanishing')).toBe(1);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
  });

  it('the gate opens when the operation was deleted meanwhile: nothing to publish', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'deleted', parameters });
    await world.daemon().handler.handle({ operation, phase: null, parameters });
    await world.services.performScheduledRestarts();
    world.store.delete('deleted');

    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
  });

  it('the direct path refuses with E_UPGRADE_PENDING while a managed record exists', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'pending', parameters });
    await world.daemon().handler.handle({ operation, phase: null, parameters });

    // `agent-upgrade activate` is a process of its own, wired as production wires it.
    const result = await simProcess(world.ports(), CONFIG, world.logger).activate({ candidatePath: LAYOUT.blue });
    expect(result).toMatchObject({ ok: false, failure: { code: 'E_UPGRADE_PENDING' } });
  });
});
