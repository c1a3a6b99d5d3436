/**
 * The identical-candidate rule on the managed path (docs/protocol.md#identical-candidate): an
 * AgentUpgrade to the binary that already runs installs nothing and switches nothing — the
 * rollback binary in the other slot is kept and the agent is not restarted — and the operation
 * is Complete. Cut short anywhere, it ends Complete or Failed with the binaries untouched.
 */
import { describe, expect, it } from 'vitest';
import { SimulatedCrash, type RebootMode } from '../../src/adapters/node/memory/memory-file-system.js';
import type { AgentUpgradeRequest } from '../../src/ports/node/operation-store.js';
import { resolveInSnapshot, tempEntries } from '../sim/host-invariants.js';
import { agentScript, digestOf, LAYOUT, ManagedWorld } from '../sim/managed-world.js';

const V1 = digestOf(agentScript('1.0.0'));
const V2 = digestOf(agentScript('2.0.0'));
const ROUNDS_MAX = 12;
const CONTAINER_COPY = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';

function requestFor(world: ManagedWorld, name: string, version: string): AgentUpgradeRequest {
  const release = world.publishRelease(version);
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  return { operation: world.store.create({ name, parameters }), phase: null, parameters };
}

/** A host on v2 after a completed upgrade from v1: blue holds v1 (last-good's), green v2 (current). */
async function upgradedWorld(): Promise<ManagedWorld> {
  const world = new ManagedWorld();
  expect(await world.daemon().handler.handle(requestFor(world, 'first', '2.0.0'))).toEqual({ kind: 'handed-over' });
  await world.services.performScheduledRestarts();
  expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
  expect(world.store.get('first')?.phase).toBe('Complete');
  return world;
}

function digestAt(world: ManagedWorld, path: string): string | null {
  const entry = world.fs.snapshot()[path];
  return entry?.kind === 'file' ? entry.sha256 : null;
}

/** The binaries and links an identical candidate must leave as they were. */
function binaries(world: ManagedWorld) {
  const snapshot = world.fs.snapshot();
  return {
    current: resolveInSnapshot(snapshot, LAYOUT.current),
    lastGood: resolveInSnapshot(snapshot, LAYOUT.lastGood),
    blue: digestAt(world, LAYOUT.blue),
    green: digestAt(world, LAYOUT.green),
  };
}

/** Drives the host to quiescence as the managed crash-point suite does; a crash reboots it. */
async function settle(world: ManagedWorld, request: AgentUpgradeRequest, mode: RebootMode): Promise<void> {
  const survive = async (body: () => Promise<unknown>): Promise<unknown> => {
    try {
      return await body();
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error;
      await world.reboot(mode);
      return null;
    }
  };
  await survive(() => world.daemon().handler.handle(request));
  for (let round = 0; round < ROUNDS_MAX; round += 1) {
    await world.services.performScheduledRestarts();
    if ((await world.services.activity()) === 'failed') {
      await survive(() => world.daemon().recover('the agent failed'));
      continue;
    }
    const daemon = world.daemon(await world.services.mainExecutable());
    const started = (await survive(() => daemon.start())) as { kind: string } | null;
    if (started?.kind !== 'open') continue;
    const phase = world.store.get(request.operation.name)?.phase ?? null;
    if (phase !== null && phase !== 'Pending') return;
    await survive(() => daemon.handler.handle({ ...request, phase }));
  }
  throw new Error('the identical upgrade did not settle');
}

describe('an AgentUpgrade to the binary that already runs', () => {
  it('is Complete without a write to a slot, a switch or a restart', async () => {
    const world = await upgradedWorld();
    const before = binaries(world);
    const starts = world.services.starts.length;

    expect(await world.daemon().handler.handle(requestFor(world, 'again', '2.0.0'))).toEqual({ kind: 'finished' });

    expect(world.store.get('again')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(world.store.terminalWrites('again')).toBe(1);
    expect(binaries(world)).toEqual(before);
    expect(before).toMatchObject({ current: LAYOUT.green, lastGood: LAYOUT.blue, blue: V1, green: V2 });
    expect({ starts: world.services.starts.length, scheduled: world.services.scheduledRestarts }).toEqual({
      starts,
      scheduled: 0,
    });
    expect((await world.container.digest('kube1'))?.sha256).toBe(V2);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(tempEntries(world.fs.snapshot())).toEqual([]);
  });

  it('makes a container copy that differs equal before Complete (I7), still without a switch', async () => {
    const world = await upgradedWorld();
    await world.fs.writeFileAtomic(CONTAINER_COPY, new TextEncoder().encode(agentScript('1.0.0')), { mode: 0o755 });
    const before = binaries(world);

    expect(await world.daemon().handler.handle(requestFor(world, 'again', '2.0.0'))).toEqual({ kind: 'finished' });

    expect(world.store.get('again')).toMatchObject({ phase: 'Complete' });
    expect((await world.container.digest('kube1'))?.sha256).toBe(V2);
    expect(binaries(world)).toEqual(before);
    expect(world.services.scheduledRestarts).toBe(0);
  });

  it('keeps its completed record when Complete cannot be published, and the gate publishes it', async () => {
    const world = await upgradedWorld();
    world.store.failTimes('publish', 1, { status: 500 });

    expect(await world.daemon().handler.handle(requestFor(world, 'again', '2.0.0'))).toEqual({ kind: 'gate' });
    expect(await world.fs.lstat(LAYOUT.record)).not.toBeNull();

    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.store.get('again')).toMatchObject({ phase: 'Complete' });
    expect(world.store.terminalWrites('again')).toBe(1);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
  });

  it.each(['prefix', 'synced'] as const)(
    'cut short at any FS op (%s durability): one terminal status, the binaries untouched',
    async (mode) => {
      const probe = await upgradedWorld();
      const from = probe.fs.opCount;
      await settle(probe, requestFor(probe, 'again', '2.0.0'), mode);
      const opCount = probe.fs.opCount - from;
      expect(opCount).toBeGreaterThan(10);
      const outcomes: Record<string, number> = {};
      for (let at = 0; at < opCount; at += 1) {
        const world = await upgradedWorld();
        const before = binaries(world);
        world.fs.crashAt(world.fs.opCount + at);
        await settle(world, requestFor(world, 'again', '2.0.0'), mode);
        const context = `crash at op ${at} of the identical upgrade`;
        const phase = world.store.get('again')?.phase ?? 'none';
        outcomes[phase] = (outcomes[phase] ?? 0) + 1;
        expect(['Complete', 'Failed'], context).toContain(phase);
        expect(world.store.terminalWrites('again'), context).toBe(1);
        expect(world.store.violations, context).toEqual([]);
        expect(binaries(world), context).toEqual(before);
        expect((await world.container.digest('kube1'))?.sha256, context).toBe(V2);
        expect(await world.fs.lstat(LAYOUT.record), context).toBeNull();
        expect(tempEntries(world.fs.snapshot()), context).toEqual([]);
      }
      expect(outcomes.Complete ?? 0).toBeGreaterThan(0);
    },
  );
});
