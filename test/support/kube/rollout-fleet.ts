// A fleet of real node hosts for rollout tests on a real API server: each machine is a `--root`
// sandbox whose compiled test agent runs under a real `agent-upgrade supervise` process, with a
// real `agent-upgrade daemon` beside it (sidecar) that authenticates as the machine's own node
// identity. Every host runs on this one machine; the Node objects only carry the labels
// (architecture, zone) a rollout plans with.

import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { SupervisorServiceManager } from '../../../src/adapters/node/supervisor/supervisor-service-manager.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { makeScratch } from '../real-tree.js';
import { assertBuildCurrent, CLI, FAST_SERVICE } from '../systemd/systemd-host.js';
import { waitFor } from '../wait-for.js';
import { ManagedProcess } from './real-apiserver-processes.js';
import type { RealCluster } from './real-cluster.js';

/** Test-sized health: a good agent proves itself in about a second, a crashing one fails at its start limit. */
const HEALTH = { timeoutMs: 12_000, stableMs: 1_000, pollMs: 250, watchMs: 0 } as const;
const SUPERVISOR_SOCKET = '/run/aks-flex-node-supervisor.sock';

export interface MachineSpec {
  readonly name: string;
  readonly arch: 'amd64' | 'arm64';
  readonly zone: string;
}

export interface FleetMachine extends MachineSpec {
  readonly root: string;
  readonly services: SupervisorServiceManager;
}

export const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Creates the machines' Node objects as the admin: agent role, architecture and zone labels. */
export async function createNodes(cluster: RealCluster, machines: readonly MachineSpec[]): Promise<void> {
  for (const machine of machines) {
    const labels = {
      'node-role.kubernetes.io/agent': '',
      'kubernetes.io/arch': machine.arch,
      'topology.kubernetes.io/zone': machine.zone,
    };
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: machine.name, labels } };
    const created = await cluster.admin('POST', '/api/v1/nodes', node);
    if (created.status !== 201) throw new Error(`Node ${machine.name}: ${created.status} ${created.text}`);
  }
}

/** Runs `work` over `items`, at most `limit` at a time (2 cores: Node start-ups are CPU-bound). */
export async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** What every machine of a fleet gets besides the defaults: configuration keys, and files under its root. */
export interface MachineHostSetup {
  readonly config: Record<string, unknown>;
  install(root: string): void;
}

export class RolloutFleet {
  readonly machines: FleetMachine[] = [];
  private readonly processes: ManagedProcess[] = [];
  private readonly scratch = makeScratch('agent-upgrade-fleet-');

  /** Where every process of the fleet logs (one file per process). */
  readonly logDir = join(this.scratch.root, 'logs');

  private constructor() {
    mkdirSync(this.logDir);
  }

  /**
   * Starts one sandbox per machine running `initialAgent` (supervisor first, then the daemon), at
   * most `concurrency` at a time. A fleet that fails to start stops what it started.
   */
  static async start(
    cluster: RealCluster,
    specs: readonly MachineSpec[],
    initialAgent: string,
    concurrency: number,
    host: MachineHostSetup = { config: {}, install: () => undefined },
  ): Promise<RolloutFleet> {
    assertBuildCurrent();
    const fleet = new RolloutFleet();
    try {
      await inBatches(specs, concurrency, async (spec) => {
        const kubeconfig = (await cluster.node(spec.name)).kubeconfigPath;
        fleet.machines.push(await fleet.startMachine(spec, kubeconfig, initialAgent, host));
      });
    } catch (error) {
      await fleet.stop();
      throw error;
    }
    return fleet;
  }

  private async startMachine(
    spec: MachineSpec,
    kubeconfig: string,
    initialAgent: string,
    host: MachineHostSetup,
  ): Promise<FleetMachine> {
    const root = join(this.scratch.root, spec.name);
    mkdirSync(join(root, 'etc/aks-flex-node'), { recursive: true });
    host.install(root);
    writeFileSync(
      join(root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({
        agent: { mode: 'sidecar', args: ['agent'] },
        // FAST_SERVICE's start limit (3 starts in 120 s) is below what a machine here goes
        // through (upgraded, rolled back, upgraded again): planned restarts clear it first.
        service: { manager: 'supervisor', ...FAST_SERVICE },
        health: HEALTH,
        container: { manager: 'none' },
        cluster: { manager: 'kubernetes', kubeconfig, machineName: spec.name },
        ...host.config,
      }),
    );
    mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
    copyFileSync(initialAgent, join(root, 'usr/local/bin/aks-flex-node'));
    await migrate(root);
    const services = new SupervisorServiceManager({
      controlSocket: join(root, SUPERVISOR_SOCKET),
      clock: new SystemClock(),
    });
    const log = (what: string) => join(this.logDir, `${spec.name}-${what}.log`);
    this.processes.push(
      ManagedProcess.start(`supervise ${spec.name}`, CLI, ['supervise', '--root', root], log('supervise')),
    );
    if (!(await waitFor(async () => (await services.mainExecutable()) !== null, 30_000, 200)))
      throw new Error(`the agent of ${spec.name} did not start under its supervisor`);
    const daemonArgs = ['daemon', '--root', root, '--log-level', 'info'];
    this.processes.push(ManagedProcess.start(`daemon ${spec.name}`, CLI, daemonArgs, log('daemon')));
    return { ...spec, root, services };
  }

  machine(name: string): FleetMachine {
    const found = this.machines.find((machine) => machine.name === name);
    if (found === undefined) throw new Error(`no machine ${name}`);
    return found;
  }

  /** The SHA-256 of the binary the machine's agent process runs now (null: no agent runs). */
  async runningDigest(name: string): Promise<string | null> {
    const executable = await this.machine(name).services.mainExecutable();
    return executable === null ? null : sha256(readFileSync(executable));
  }

  /** The daemons first (no upgrade may start mid-teardown), then the supervisors, then any agent left. */
  async stop(): Promise<void> {
    const daemons = this.processes.filter((child) => child.name.startsWith('daemon'));
    const supervisors = this.processes.filter((child) => !child.name.startsWith('daemon'));
    await Promise.all(daemons.map((child) => child.stop(10_000)));
    await Promise.all(supervisors.map((child) => child.stop(10_000)));
    // A supervisor killed after its grace leaves its agent behind: those run from inside the sandbox.
    for (const pid of processesRunningUnder(this.scratch.root)) process.kill(pid, 'SIGKILL');
    this.processes.length = 0;
    this.scratch.cleanup();
  }
}

function migrate(root: string): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, 'migrate', '--root', root, '--json'], { timeout: 60_000 }, (error, _out, err) =>
      error === null ? resolve() : reject(new Error(`migrate of ${root} failed: ${err}`)),
    );
  });
}

/** PIDs of live processes whose executable lies under `directory`. */
function processesRunningUnder(directory: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/exe`).startsWith(`${directory}/`)) pids.push(Number(entry));
    } catch {
      // Gone, a zombie, or a kernel thread.
    }
  }
  return pids;
}
