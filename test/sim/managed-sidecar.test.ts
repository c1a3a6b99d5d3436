import { describe, expect, it } from 'vitest';
import { SimulatedCrash, type RebootMode } from '../../src/adapters/node/memory/memory-file-system.js';
import type { AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { checkHostInvariants, resolveInSnapshot, tempEntries } from './host-invariants.js';
import { describeCrash } from './sim-process.js';
import { agentScript, digestOf, LAYOUT, ManagedWorld, SIDECAR_CONFIG } from './managed-world.js';

const V1 = agentScript('1.0.0');
const V2 = agentScript('2.0.0');
const ROUNDS_MAX = 12;

/**
 * Sidecar mode: the upgrader is its own daemon and upgrades another agent's binary. After the
 * switch the same process restarts the agent unit and runs its gate (health, nspawn, publish,
 * or rollback and a restart into last-good). A crash reboots the host: the agent unit starts
 * from current, a new sidecar daemon starts with its gate, and a still-pending operation is
 * handled again.
 */
async function drive(
  behaviour: AgentBehaviour,
  crashAt: number | null,
  mode: RebootMode,
): Promise<{ world: ManagedWorld; trace: string[] }> {
  const world = new ManagedWorld();
  const release = world.publishRelease('2.0.0');
  world.behaviours.set(digestOf(V2), behaviour);
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name: 'upgrade', parameters });
  await world.services.restart();
  if (crashAt !== null) world.fs.crashAt(crashAt);
  const trace: string[] = [];
  const attempt = async (name: string, body: () => Promise<unknown>): Promise<unknown> => {
    try {
      const outcome = await body();
      trace.push(`${name}:${JSON.stringify(outcome)}`);
      return outcome;
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error;
      trace.push(`${name}:${describeCrash(error)}`);
      await world.reboot(mode);
      return 'crash';
    }
  };
  for (let round = 0; round < ROUNDS_MAX; round += 1) {
    const daemon = world.daemon(null, SIDECAR_CONFIG);
    const started = await attempt('start', () => daemon.start());
    if (started === 'crash' || (started as { kind: string }).kind !== 'open') continue;
    const phase = world.store.get('upgrade')?.phase ?? null;
    if (phase !== null && phase !== 'Pending') return { world, trace };
    const handled = await attempt('handle', () => daemon.handler.handle({ operation, phase, parameters }));
    if (handled === 'crash') continue;
    await attempt('gate', () => daemon.start());
  }
  throw new Error(`no quiescence: ${trace.join(' ')}`);
}

async function expectSettled(world: ManagedWorld, trace: readonly string[], behaviour: AgentBehaviour): Promise<void> {
  const context = trace.join(' ');
  const snapshot = world.fs.snapshot();
  expect(checkHostInvariants(snapshot, new Set([digestOf(V1), digestOf(V2)])), context).toEqual([]);
  expect(tempEntries(snapshot), context).toEqual([]);
  expect(world.store.violations, context).toEqual([]);
  expect(world.store.terminalWrites('upgrade'), context).toBe(1);
  expect(await world.fs.lstat(LAYOUT.record), context).toBeNull();
  const current = resolveInSnapshot(snapshot, LAYOUT.current) ?? resolveInSnapshot(snapshot, LAYOUT.entry);
  const entry = current === null ? undefined : snapshot[current];
  const digest = entry?.kind === 'file' ? entry.sha256 : null;
  const expected = world.store.get('upgrade')?.phase === 'Complete' ? V2 : V1;
  if (expected === V2) expect(behaviour, context).toBe('healthy');
  expect(digest, context).toBe(digestOf(expected));
  expect((await world.container.digest('kube1'))?.sha256, context).toBe(digestOf(expected));
  // The agent unit runs what current names (I12).
  const running = await world.services.mainExecutable();
  expect(running === null ? null : (await world.fs.hashFile(running, 1 << 20)).sha256, context).toBe(
    digestOf(expected),
  );
}

describe.each(['healthy', 'crash-on-start', 'crash-after-start'] as const)(
  'managed path in sidecar mode with a %s candidate',
  (behaviour) => {
    it('settles: Complete for a healthy candidate, otherwise rolled back and Failed', async () => {
      const { world, trace } = await drive(behaviour, null, 'prefix');
      await expectSettled(world, trace, behaviour);
      expect(world.store.get('upgrade')?.phase).toBe(behaviour === 'healthy' ? 'Complete' : 'Failed');
    });

    it.each(['prefix', 'synced'] as const)(
      'keeps the invariants after a crash at any FS op (%s durability)',
      async (mode) => {
        const probe = await drive(behaviour, null, mode);
        const count = probe.world.fs.opCount;
        for (let crashAt = 0; crashAt < count; crashAt += 1) {
          const { world, trace } = await drive(behaviour, crashAt, mode);
          await expectSettled(world, trace, behaviour);
        }
      },
    );
  },
);

describe('managed path in sidecar mode with an agent that hangs on start', () => {
  it('the restart times out, the failure is recorded, the gate rolls back and publishes Failed once', async () => {
    const { world, trace } = await drive('hang', null, 'prefix');
    expect(world.store.get('upgrade')).toMatchObject({ phase: 'Failed' });
    expect(world.store.terminalWrites('upgrade')).toBe(1);
    const current = resolveInSnapshot(world.fs.snapshot(), LAYOUT.current);
    expect(current, trace.join(' ')).toBe(LAYOUT.blue);
  });
});
