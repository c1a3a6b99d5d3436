import { describe, expect, it } from 'vitest';
import { SimulatedCrash, type RebootMode } from '../../src/adapters/node/memory/memory-file-system.js';
import type { AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { checkHostInvariants, resolveInSnapshot, tempEntries } from './host-invariants.js';
import { describeCrash } from './sim-process.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { agentScript, CONFIG, digestOf, LAYOUT, ManagedWorld } from './managed-world.js';

const V1 = agentScript('1.0.0');
const V2 = agentScript('2.0.0');
const KNOWN = new Set([digestOf(V1), digestOf(V2)]);
const STEPS_MAX = 12;

interface Run {
  readonly world: ManagedWorld;
  readonly trace: string[];
}

/**
 * Drives one managed upgrade to quiescence the way a host would: the daemon handles the
 * operation, scheduled restarts run, a failed unit triggers `recover`, every started daemon runs
 * its startup gate first and handles a still-pending operation after. A crash (at FS op
 * `crashAt` of the first process) reboots the world in `mode`; every process after a reboot is
 * new and remembers nothing.
 */
async function drive(
  behaviour: AgentBehaviour,
  crashAt: number | null,
  mode: RebootMode,
  config: UpgraderConfig = CONFIG,
): Promise<Run> {
  const world = new ManagedWorld();
  world.config = config;
  const release = world.publishRelease('2.0.0');
  world.behaviours.set(digestOf(V2), behaviour);
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name: 'upgrade', parameters });
  if (crashAt !== null) world.fs.crashAt(crashAt);
  const trace: string[] = [];
  const step = async (name: string, body: () => Promise<unknown>): Promise<boolean> => {
    try {
      const outcome = await body();
      trace.push(`${name}:${JSON.stringify(outcome)}`);
      return true;
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error;
      trace.push(`${name}:${describeCrash(error)}`);
      await world.reboot(mode);
      return false;
    }
  };

  await step('handle', () => world.daemon().handler.handle({ operation, phase: null, parameters }));
  for (let round = 0; round < STEPS_MAX; round += 1) {
    if ((await world.services.performScheduledRestarts()) > 0) trace.push('restart');
    if ((await world.services.activity()) === 'failed') {
      await step('recover', () => world.daemon().recover('upgraded daemon failed repeatedly'));
      continue;
    }
    const daemon = world.daemon(await world.services.mainExecutable());
    let outcome: unknown = null;
    if (!(await step('start', async () => (outcome = await daemon.start())))) continue;
    if ((outcome as { kind: string }).kind !== 'open') continue;
    const phase = world.store.get('upgrade')?.phase ?? null;
    if (phase === null || phase === 'Pending') {
      await step('handle', () => daemon.handler.handle({ operation, phase, parameters }));
      continue;
    }
    return { world, trace };
  }
  throw new Error(`no quiescence: ${trace.join(' ')}`);
}

async function opCount(behaviour: AgentBehaviour, config: UpgraderConfig = CONFIG): Promise<number> {
  const run = await drive(behaviour, null, 'prefix', config);
  return run.world.fs.opCount;
}

async function expectSettled({ world, trace }: Run, behaviour: AgentBehaviour): Promise<void> {
  const context = trace.join(' ');
  const snapshot = world.fs.snapshot();
  expect(checkHostInvariants(snapshot, KNOWN), context).toEqual([]);
  expect(tempEntries(snapshot), context).toEqual([]);
  expect(world.store.violations, context).toEqual([]);
  expect(world.store.terminalWrites('upgrade'), context).toBe(1);
  expect(await world.fs.lstat(LAYOUT.record), context).toBeNull();
  expect(await world.fs.lstat(LAYOUT.watch), context).toBeNull();
  const status = world.store.get('upgrade');
  // The binary the agent starts from: current, or the legacy entry on a host not yet migrated.
  const current = resolveInSnapshot(snapshot, LAYOUT.current) ?? resolveInSnapshot(snapshot, LAYOUT.entry);
  const currentEntry = current === null ? undefined : snapshot[current];
  const currentDigest = currentEntry?.kind === 'file' ? currentEntry.sha256 : null;
  if (status?.phase === 'Complete') {
    // I7 and I12: Complete means the candidate runs and the nspawn copy equals it.
    expect(currentDigest, context).toBe(digestOf(V2));
    expect((await world.container.digest('kube1'))?.sha256, context).toBe(digestOf(V2));
    expect(behaviour, context).toBe('healthy');
  } else {
    // I12: Failed means the previous binary is current again (or never stopped being).
    expect(status?.phase, context).toBe('Failed');
    expect(currentDigest, context).toBe(digestOf(V1));
    expect((await world.container.digest('kube1'))?.sha256, context).toBe(digestOf(V1));
  }
}

describe.each(['healthy', 'crash-on-start'] as const)(
  'managed path with a %s candidate: crash at every FS op',
  (behaviour) => {
    it('settles without a crash', async () => {
      await expectSettled(await drive(behaviour, null, 'prefix'), behaviour);
    });

    it.each(['prefix', 'synced'] as const)(
      'keeps I1, I5, I7, I12 and quiesces after a crash at any op (%s durability)',
      async (mode) => {
        const count = await opCount(behaviour);
        expect(count).toBeGreaterThan(10);
        for (let crashAt = 0; crashAt < count; crashAt += 1) {
          await expectSettled(await drive(behaviour, crashAt, mode), behaviour);
        }
        console.info(`managed path, ${behaviour} candidate, ${mode}: ${count} crash points`);
      },
    );
  },
);

/**
 * With a watch window every checkpoint is one more crash point: a crash between any two leaves
 * the window to the next process, which resumes it (a reboot is no crash of the candidate), so
 * every crash after the window opened still ends Complete. A 3 s window has three checkpoints,
 * each the same write as the ten of a longer one; prefix durability is the harsher mode.
 */
describe('managed path with a healthy candidate in a 3 s watch window: crash at every FS op', () => {
  const config: UpgraderConfig = { ...CONFIG, health: { ...CONFIG.health, watchMs: 3_000 } };
  it.each(['prefix'] as const)('keeps I1, I5, I7, I12 and completes (%s durability)', async (mode) => {
    const uninterrupted = await drive('healthy', null, 'prefix', config);
    const count = uninterrupted.world.fs.opCount;
    const opened = uninterrupted.world.fs.journal.find((entry) => entry.path.startsWith(LAYOUT.watch))?.index;
    expect(opened).toBeGreaterThan(10);
    expect(count).toBeGreaterThan(await opCount('healthy'));
    for (let crashAt = 0; crashAt < count; crashAt += 1) {
      const run = await drive('healthy', crashAt, mode, config);
      await expectSettled(run, 'healthy');
      if (crashAt >= (opened ?? count))
        expect(run.world.store.get('upgrade')?.phase, run.trace.join(' ')).toBe('Complete');
    }
    console.info(`managed path, healthy candidate, 3 s window, ${mode}: ${count} crash points`);
  });
});
