/**
 * The direct path (`Activation.activate`, what `agent-upgrade activate CANDIDATE` runs) crashed
 * at every FS op, in both durability modes, for a healthy and a crash-after-start candidate, on
 * a legacy host (migration included) and on a managed one. After the reboot the unit starts from
 * current, and the host must satisfy I1 (a runnable binary with a known digest), I3 (no rename
 * or unlink of the active slot while it is active, enforced by a mutation hook as it happens) and
 * I4 (the record parses or is absent; the direct path never writes one). Re-running `activate`
 * must then converge — activated, unchanged or rolled back, with current on the healthy
 * candidate or on the previous binary (I12) — and running it once more changes nothing material.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import {
  MemoryFileSystem,
  SimulatedCrash,
  type RebootMode,
  type Snapshot,
  type TreeSpec,
} from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryHostLock } from '../../src/adapters/node/memory/memory-host-lock.js';
import { MemoryProcessRunner } from '../../src/adapters/node/memory/memory-process-runner.js';
import { NoOperationStore } from '../../src/adapters/node/none/no-operation-store.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import type { ActivationReport } from '../../src/app/node/activation/activation-report.js';
import { InvariantViolation } from '../../src/domain/common/invariant.js';
import { StateStore } from '../../src/app/node/state/state-store.js';
import { guardActiveSlot } from './active-slot-guard.js';
import { checkHostInvariants, checkRecordParses, resolveInSnapshot, tempEntries } from './host-invariants.js';
import { agentScript, CONFIG, digestOf, LAYOUT, MemoryArtifactSource } from './managed-world.js';
import { orThrow, simProcess } from './sim-process.js';
import { RecordingLogger } from '../support/recording-logger.js';

const V1 = agentScript('1.0.0');
const V2 = agentScript('2.0.0');
const KNOWN = new Set([digestOf(V1), digestOf(V2)]);
const CANDIDATE = '/var/tmp/aks-flex-node-candidate';
const CONTAINER_COPY = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';
const MODES: readonly RebootMode[] = ['prefix', 'synced'];
const exe = (text: string) => ({ file: text, mode: 0o755 });

const HOSTS: Readonly<Record<'legacy' | 'managed', TreeSpec>> = {
  legacy: { [LAYOUT.entry]: exe(V1), [CONTAINER_COPY]: exe(V1), [CANDIDATE]: exe(V2) },
  managed: {
    [LAYOUT.blue]: exe(V1),
    [LAYOUT.current]: { symlink: 'aks-flex-node-blue' },
    [LAYOUT.lastGood]: { symlink: 'aks-flex-node-blue' },
    [LAYOUT.entry]: { symlink: '../lib/aks-flex-node/aks-flex-node-current' },
    [CONTAINER_COPY]: exe(V1),
    [CANDIDATE]: exe(V2),
  },
};

/** One machine: what survives a crash is `fs`; everything else is rebuilt at boot. */
class DirectHost {
  readonly clock = new MemoryClock();
  readonly logger = new RecordingLogger();
  readonly runner = new MemoryProcessRunner();
  lock = new MemoryHostLock();
  services: MemoryServiceManager;
  container: MemoryContainerRootfs;

  constructor(
    public fs: MemoryFileSystem,
    private readonly behaviour: AgentBehaviour,
  ) {
    this.services = this.newServices();
    this.container = this.newContainer();
    // `<candidate> version` prints the version written in the candidate script.
    this.runner.setBehaviour(CANDIDATE, async () => {
      const bytes = await this.fs.readFile(CANDIDATE, 1024 * 1024);
      const version = bytes === null ? undefined : /# aks-flex-node (\S+)/.exec(new TextDecoder().decode(bytes))?.[1];
      return version === undefined
        ? { kind: 'exited', exitCode: 1, stdout: '', stderr: '' }
        : { kind: 'exited', exitCode: 0, stdout: `aks-flex-node version v${version}\n`, stderr: '' };
    });
  }

  static async boot(tree: TreeSpec, behaviour: AgentBehaviour): Promise<DirectHost> {
    const fs = MemoryFileSystem.fromTree(tree);
    guardActiveSlot(fs);
    const host = new DirectHost(fs, behaviour);
    await host.services.restart();
    return host;
  }

  /** Power loss, then the boot: the unit starts from current (or the legacy entry). */
  async reboot(mode: RebootMode): Promise<void> {
    this.fs = this.fs.reboot(mode);
    guardActiveSlot(this.fs);
    this.services = this.newServices();
    this.container = this.newContainer();
    this.lock = new MemoryHostLock();
    await this.services.restart();
  }

  /** A fresh process of the CLI: the production composition over this host's memory ports. */
  process(): Upgrader {
    return simProcess(
      {
        fileSystem: this.fs,
        clock: this.clock,
        hostLock: this.lock,
        serviceManager: this.services,
        containerRootfs: this.container,
        processRunner: this.runner,
        artifactSource: new MemoryArtifactSource(),
        operationStore: new NoOperationStore(),
      },
      CONFIG,
      this.logger,
    );
  }

  /** A fresh `agent-upgrade migrate` process. */
  async migrate(): Promise<void> {
    orThrow(await this.process().migrate());
  }

  /**
   * The outcome of `agent-upgrade activate CANDIDATE` (a rolled-back one is a failure that carries
   * it), or the code it refused with; crashes and invariant violations propagate.
   */
  async activate(): Promise<ActivationReport['outcome'] | `refused ${string}`> {
    const result = await this.process().activate({ candidatePath: CANDIDATE });
    if (result.ok) return result.value.outcome;
    return result.activation === null ? `refused ${result.failure.code}` : result.activation.outcome;
  }

  private newServices(): MemoryServiceManager {
    const candidate = digestOf(V2);
    return new MemoryServiceManager({
      fs: this.fs,
      execStart: LAYOUT.current,
      legacyExecStart: LAYOUT.entry,
      behaviourOf: (digest) => (digest === candidate ? this.behaviour : 'healthy'),
    });
  }

  private newContainer(): MemoryContainerRootfs {
    return new MemoryContainerRootfs({
      fs: this.fs,
      machinesDir: '/var/lib/machines',
      binaryPath: '/usr/local/bin/aks-flex-node',
      activeMachine: () => 'kube1',
      maxBytes: CONFIG.artifact.maxBinaryBytes,
    });
  }
}

function digestAt(snapshot: Snapshot, path: string | null): string | null {
  const entry = path === null ? undefined : snapshot[path];
  return entry?.kind === 'file' ? entry.sha256 : null;
}

/** What an activation may change: links, slots, the nspawn copy, temps. The state file is bookkeeping. */
function material(snapshot: Snapshot) {
  const current = resolveInSnapshot(snapshot, LAYOUT.current) ?? resolveInSnapshot(snapshot, LAYOUT.entry);
  return {
    current,
    currentDigest: digestAt(snapshot, current),
    lastGood: resolveInSnapshot(snapshot, LAYOUT.lastGood),
    entry: resolveInSnapshot(snapshot, LAYOUT.entry),
    blue: digestAt(snapshot, LAYOUT.blue),
    green: digestAt(snapshot, LAYOUT.green),
    nspawn: digestAt(snapshot, CONTAINER_COPY),
    temps: tempEntries(snapshot),
  };
}

/** I1, I4 and a parseable state file, on a host as it is now. */
async function expectHostInvariants(host: DirectHost, context: string): Promise<void> {
  expect(checkHostInvariants(host.fs.snapshot(), KNOWN), context).toEqual([]);
  expect(await checkRecordParses(host.fs), context).toEqual([]);
  expect(await host.fs.lstat(LAYOUT.record), `${context}: the direct path never writes the record`).toBeNull();
  expect((await new StateStore(host.fs, LAYOUT.state).read()).ok, `${context}: the state file parses`).toBe(true);
}

/** Where a converged activation leaves the host: the healthy candidate, or the previous binary (I12). */
async function expectConverged(host: DirectHost, behaviour: AgentBehaviour, context: string): Promise<void> {
  await expectHostInvariants(host, context);
  const view = material(host.fs.snapshot());
  const expected = behaviour === 'healthy' ? digestOf(V2) : digestOf(V1);
  expect(view.currentDigest, `${context}: current (I12)`).toBe(expected);
  expect(view.nspawn, `${context}: the nspawn copy follows current (I7)`).toBe(expected);
  expect(view.entry, `${context}: the entry leads to current`).toBe(view.current);
  expect(view.temps.length, `${context}: temp entries left: ${view.temps.join(', ')}`).toBe(0);
  expect(await host.services.activity(), `${context}: the agent runs`).toBe('active');
  expect(host.services.starts[host.services.starts.length - 1]?.digest, `${context}: the agent runs current`).toBe(
    expected,
  );
}

async function faultFreeOpCount(tree: TreeSpec, behaviour: AgentBehaviour): Promise<number> {
  const host = await DirectHost.boot(tree, behaviour);
  expect(await host.activate()).toBe(behaviour === 'healthy' ? 'activated' : 'rolled-back');
  await expectConverged(host, behaviour, 'fault-free');
  return host.fs.opCount;
}

const counts = { crashPoints: 0 };
let stackTraceLimit = Error.stackTraceLimit;
beforeAll(() => {
  // memfs builds an Error per failed lookup; their stacks cost a third of the run time.
  stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
});
afterAll(() => {
  Error.stackTraceLimit = stackTraceLimit;
  console.info(`direct path: ${counts.crashPoints} crash points (op × durability mode × candidate × host)`);
});

describe.each(['legacy', 'managed'] as const)('direct activation on a %s host: crash at every FS op', (hostKind) => {
  describe.each(['healthy', 'crash-after-start'] as const)('%s candidate', (behaviour) => {
    it.each(MODES)(
      '%s durability: I1, I3, I4 after the reboot; a re-run converges; another changes nothing',
      async (mode) => {
        const tree = HOSTS[hostKind];
        const opCount = await faultFreeOpCount(tree, behaviour);
        expect(opCount).toBeGreaterThan(10);
        const outcomes: Record<string, number> = {};
        const broken: string[] = [];
        for (let crashAt = 0; crashAt < opCount; crashAt += 1) {
          const context = `${hostKind}, ${behaviour}, ${mode}, crash at op ${crashAt}`;
          const host = await DirectHost.boot(tree, behaviour);
          host.fs.crashAt(crashAt);
          await expect(host.process().activate({ candidatePath: CANDIDATE }), context).rejects.toBeInstanceOf(
            SimulatedCrash,
          );
          const crashedOp =
            host.fs.journal.length === 0
              ? 'first op'
              : `after ${host.fs.journal[host.fs.journal.length - 1]?.op ?? ''} ${host.fs.journal[host.fs.journal.length - 1]?.path ?? ''}`;
          await host.reboot(mode);
          await expectHostInvariants(host, `${context} (${crashedOp}), after the reboot`);

          const rerun = await host.activate();
          outcomes[rerun] = (outcomes[rerun] ?? 0) + 1;
          // A candidate quarantined before the crash is refused without touching the host, so the
          // temps of the interrupted run wait for the next migration (every daemon start runs one).
          if (rerun === 'refused E_QUARANTINED') await host.migrate();
          try {
            await expectConverged(host, behaviour, `${context} (${crashedOp}), re-run -> ${rerun}`);
          } catch (error) {
            broken.push(error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error));
            continue;
          }
          const once = material(host.fs.snapshot());
          const again = await host.activate();
          expect(['unchanged', 'refused E_QUARANTINED'], `${context}: the third run -> ${again}`).toContain(again);
          expect(material(host.fs.snapshot()), `${context}: the third run changes nothing material`).toEqual(once);
          await expectConverged(host, behaviour, `${context}, third run`);
        }
        counts.crashPoints += opCount;
        console.info(
          `${hostKind}, ${behaviour}, ${mode}: ${opCount} crash points, re-run outcomes ${JSON.stringify(outcomes)}, ${broken.length} not converged`,
        );
        expect(
          broken,
          `${broken.length} of ${opCount} crash points did not converge on a re-run:\n${broken.join('\n')}`,
        ).toEqual([]);
      },
    );
  });
});

describe('direct activation: the fault-free baseline', () => {
  it('the I3 guard is live: replacing the active slot is refused as it happens', async () => {
    const host = await DirectHost.boot(HOSTS.managed, 'healthy');
    await expect(
      host.fs.writeFileAtomic(LAYOUT.blue, new TextEncoder().encode(V2), { mode: 0o755 }),
    ).rejects.toBeInstanceOf(InvariantViolation);
  });

  it('a healthy candidate is activated, then an identical one is unchanged', async () => {
    const host = await DirectHost.boot(HOSTS.legacy, 'healthy');
    expect(await host.activate()).toBe('activated');
    const once = material(host.fs.snapshot());
    expect(await host.activate()).toBe('unchanged');
    expect(material(host.fs.snapshot())).toEqual(once);
  });

  it('a crash-after-start candidate is rolled back and then refused as quarantined', async () => {
    const host = await DirectHost.boot(HOSTS.managed, 'crash-after-start');
    expect(await host.activate()).toBe('rolled-back');
    await expectConverged(host, 'crash-after-start', 'rolled back');
    expect(await host.activate()).toBe('refused E_QUARANTINED');
  });
});
