import { describe, expect, it } from 'vitest';
import { LAYOUT, ManagedWorld, CANARY, agentScript, digestOf } from './managed-world.js';
import { resolveInSnapshot } from './host-invariants.js';

async function currentSlot(world: ManagedWorld): Promise<string | null> {
  return resolveInSnapshot(world.fs.snapshot(), LAYOUT.current);
}

function statusOf(world: ManagedWorld, name: string) {
  return world.store.get(name);
}

describe('managed path (self-hosted) in a simulated world', () => {
  it('upgrades: the old daemon hands over, the restarted candidate publishes Complete once and deletes the record', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const operation = world.store.create({
      name: 'upgrade-1',
      parameters: { downloadURL: release.url, sha256: release.sha256 },
    });

    const old = world.daemon();
    expect(
      await old.handler.handle({
        operation,
        phase: null,
        parameters: { downloadURL: release.url, sha256: release.sha256 },
      }),
    ).toEqual({ kind: 'handed-over' });
    expect(statusOf(world, 'upgrade-1')?.phase).toBe('InProgress');
    expect(await world.services.performScheduledRestarts()).toBe(1);

    const restarted = world.daemon(await world.services.mainExecutable());
    expect(await restarted.start()).toEqual({ kind: 'open' });

    expect(statusOf(world, 'upgrade-1')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(world.store.terminalWrites('upgrade-1')).toBe(1);
    expect(world.store.violations).toEqual([]);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(await currentSlot(world)).toBe(LAYOUT.green);
    expect((await world.container.digest('kube1'))?.sha256).toBe(digestOf(agentScript('2.0.0')));
    expect(JSON.stringify(world.logger.lines) + JSON.stringify(world.store.history('upgrade-1'))).not.toContain(CANARY);
  });

  it('a committed record without the candidate digest settles: the state is written once and Complete published', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const operation = world.store.create({
      name: 'upgrade-nodigest',
      parameters: { downloadURL: release.url, sha256: release.sha256 },
    });
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({
      kind: 'handed-over',
    });
    expect(await world.services.performScheduledRestarts()).toBe(1);
    const record = JSON.parse(
      new TextDecoder().decode((await world.fs.readFile(LAYOUT.record, 65536)) ?? new Uint8Array()),
    ) as Record<string, unknown>;
    await world.fs.writeFileAtomic(
      LAYOUT.record,
      new TextEncoder().encode(JSON.stringify({ ...record, candidateDigest: null })),
      { mode: 0o600 },
    );

    const stateWritesBefore = world.fs.journal.filter(
      (entry) => entry.op === 'rename' && entry.path === LAYOUT.state,
    ).length;
    const restarted = world.daemon(await world.services.mainExecutable());
    expect(await restarted.start()).toEqual({ kind: 'open' });
    expect(statusOf(world, 'upgrade-nodigest')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(
      world.fs.journal.filter((entry) => entry.op === 'rename' && entry.path === LAYOUT.state).length -
        stateWritesBefore,
    ).toBe(1);
  });

  it('a release older than what runs is refused like on the direct path: Failed/ExecutionFailed, binaries untouched', async () => {
    const world = new ManagedWorld('3.0.0');
    const release = world.publishRelease('0.5.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'downgrade', parameters });
    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({ kind: 'finished' });
    expect(statusOf(world, 'downgrade')).toMatchObject({ phase: 'Failed', reason: 'ExecutionFailed' });
    expect(world.logger.lines.some((line) => line.fields.code === 'E_DOWNGRADE_REFUSED')).toBe(true);
    expect(await currentSlot(world)).toBe(LAYOUT.blue);
    expect((await world.fs.hashFile(LAYOUT.blue, 1 << 20)).sha256).toBe(digestOf(agentScript('3.0.0')));
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
  });

  it('an operation that allows a downgrade (a rollout rolling a machine back) takes the older release', async () => {
    const world = new ManagedWorld('3.0.0');
    const release = world.publishRelease('2.5.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256, allowDowngrade: 'true' };
    const operation = world.store.create({ name: 'roll-back', parameters });
    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({
      kind: 'handed-over',
    });
    expect(await world.services.performScheduledRestarts()).toBe(1);
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(statusOf(world, 'roll-back')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(await currentSlot(world)).toBe(LAYOUT.green);
    expect((await world.fs.hashFile(LAYOUT.green, 1 << 20)).sha256).toBe(digestOf(agentScript('2.5.0')));
  });

  it('allowDowngrade other than "true" or "false" is InvalidParameters, before anything is touched', async () => {
    const world = new ManagedWorld('3.0.0');
    const release = world.publishRelease('2.5.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256, allowDowngrade: 'yes' };
    const operation = world.store.create({ name: 'roll-back', parameters });
    const before = world.fs.opCount;
    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({ kind: 'finished' });
    expect(statusOf(world, 'roll-back')).toMatchObject({ phase: 'Failed', reason: 'InvalidParameters' });
    expect(world.fs.journal.filter((entry) => entry.index >= before).length).toBe(0);
  });

  it('a candidate that crash-loops is recovered through `recover`; last-good publishes Failed/DaemonFailed once', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    world.behaviours.set(digestOf(agentScript('2.0.0')), 'crash-on-start');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'upgrade-2', parameters });

    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({
      kind: 'handed-over',
    });
    await world.services.performScheduledRestarts();
    expect(await world.services.activity()).toBe('failed');

    // OnFailure: the recovery script runs `<last-good> recover`, which restarts the unit.
    expect(await world.daemon().recover('upgraded daemon failed repeatedly')).toMatchObject({
      recovered: true,
      rolledBackTo: 'blue',
    });
    const lastGood = world.daemon(await world.services.mainExecutable());
    expect(await lastGood.start()).toEqual({ kind: 'open' });

    expect(statusOf(world, 'upgrade-2')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(world.store.terminalWrites('upgrade-2')).toBe(1);
    expect(await currentSlot(world)).toBe(LAYOUT.blue);
    expect((await world.container.digest('kube1'))?.sha256).toBe(digestOf(agentScript('1.0.0')));
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
  });

  it('invalid parameters: Failed/InvalidParameters and the host untouched', async () => {
    const world = new ManagedWorld();
    const before = world.fs.snapshot();
    const parameters = { downloadURL: `ftp://releases.example/agent.tar.gz?sig=${CANARY}` };
    const operation = world.store.create({ name: 'bad', parameters });

    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({ kind: 'finished' });

    expect(statusOf(world, 'bad')).toMatchObject({ phase: 'Failed', reason: 'InvalidParameters' });
    expect(world.fs.snapshot()).toEqual(before);
    expect(JSON.stringify(world.store.history('bad'))).not.toContain(CANARY);
  });

  it('a busy host lock (a direct activation) requeues after 5 s with the status untouched', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url };
    const operation = world.store.create({ name: 'later', parameters });
    await world.lock.tryAcquire();

    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({
      kind: 'requeue',
      afterMs: 5000,
    });
    expect(statusOf(world, 'later')?.phase).toBeNull();
  });

  it('a digest mismatch fails before the switch: Failed/ExecutionFailed, binaries untouched, record gone', async () => {
    const world = new ManagedWorld();
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: '0'.repeat(64) };
    const operation = world.store.create({ name: 'mismatch', parameters });

    expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({ kind: 'finished' });

    expect(statusOf(world, 'mismatch')).toMatchObject({ phase: 'Failed', reason: 'ExecutionFailed' });
    expect(await currentSlot(world)).toBe(LAYOUT.blue);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(await world.fs.lstat(LAYOUT.green)).toBeNull();
  });
});

describe('an operation this node cannot report on', () => {
  /** The binaries, links and slots: what an upgrade would change (the record's directory aside). */
  const material = (world: ManagedWorld) =>
    Object.fromEntries(Object.entries(world.fs.snapshot()).filter(([path]) => !path.startsWith('/etc')));

  async function attempt(world: ManagedWorld, before: (name: string) => void) {
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'not-ours', parameters });
    before('not-ours');
    const tree = material(world);
    const outcome = await world.daemon().handler.handle({ operation, phase: null, parameters });
    return { outcome, tree };
  }

  it('is left alone when the policy refuses its status (403): no upgrade, no record, no status', async () => {
    const world = new ManagedWorld();
    const { outcome, tree } = await attempt(world, () => world.store.failNext('markInProgress', { status: 403 }));
    expect(outcome).toEqual({ kind: 'finished' });
    expect(material(world)).toEqual(tree);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(world.store.get('not-ours')?.phase).toBeNull();
    expect(world.store.history('not-ours')).toEqual([]);
  });

  it('is not started when it was deleted before InProgress', async () => {
    const world = new ManagedWorld();
    const { outcome, tree } = await attempt(world, (name) => world.store.delete(name));
    expect(outcome).toEqual({ kind: 'finished' });
    expect(material(world)).toEqual(tree);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(world.services.starts.length).toBe(0);
  });
});
