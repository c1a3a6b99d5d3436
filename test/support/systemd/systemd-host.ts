import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NodeFileSystem } from '../../../src/adapters/node/host/node-file-system.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import { SystemdServiceManager } from '../../../src/adapters/node/systemd/systemd-service-manager.js';
import { systemdAssets } from '../../../src/app/node/composition/service-platform.module.js';
import { loadConfig } from '../../../src/app/node/config/load-config.js';
import type { UpgraderConfig } from '../../../src/app/node/config/upgrader-config.js';
import type { HostIdentity } from '../../../src/app/node/host-identity.js';
import { deriveLayout, type SlotLayout } from '../../../src/domain/node/layout/slot-layout.js';
import { buildTestAgent } from '../agent/build-agent.js';
import { makeScratch } from '../real-tree.js';
import { PrivateSystemd, type CommandResult } from './private-systemd.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CLI = join(REPO, 'bin/agent-upgrade');

/** How many sandbox hosts one booted systemd can serve (their unit dirs are on its search path). */
const HOST_SLOTS = 24;

/** Test-sized timings: a crash loop hits the start limit in seconds, health settles in ~1.5 s. */
export const FAST_SERVICE = { restartSec: 1, startLimitBurst: 3, startLimitIntervalSec: 120 } as const;
export const FAST_HEALTH = { timeoutMs: 12_000, stableMs: 1_500, pollMs: 250, watchMs: 0 } as const;

/** A sandbox host's configuration changes, or a function of its root that returns them. */
export type HostConfig = Record<string, unknown> | ((root: string) => Record<string, unknown>);

/**
 * One test file's world: a private systemd and up to 24 sandbox hosts, each a `--root` with its
 * own agent and recovery unit names, whose unit directory systemd searches.
 */
export class SystemdWorld {
  private hosts = 0;

  private constructor(
    readonly systemd: PrivateSystemd,
    readonly base: string,
    private readonly cleanup: () => void,
  ) {}

  static async create(): Promise<SystemdWorld> {
    assertBuildCurrent();
    const scratch = makeScratch('agent-upgrade-systemd-');
    const unitDirs = Array.from({ length: HOST_SLOTS }, (_, index) =>
      join(scratch.root, `h${index}`, 'etc/systemd/system'),
    );
    try {
      const systemd = await PrivateSystemd.boot({ unitDirs, logPath: join(scratch.root, 'systemd.log') });
      return new SystemdWorld(systemd, scratch.root, scratch.cleanup);
    } catch (error) {
      scratch.cleanup();
      throw error;
    }
  }

  /**
   * A fresh sandbox host; `config` is merged over the systemd test configuration (a function of
   * the host's root when a value must name a path under it, e.g. an argument of the agent).
   */
  host(config: HostConfig = {}): SandboxHost {
    if (this.hosts >= HOST_SLOTS) throw new Error('too many sandbox hosts for one systemd');
    const index = this.hosts++;
    const root = join(this.base, `h${index}`);
    return new SandboxHost(this.systemd, root, `t${index}-agent`, typeof config === 'function' ? config(root) : config);
  }

  /**
   * A migrated host whose unit runs v1 (a build that embeds the upgrader, as a self-hosted agent
   * does) from the blue slot, with nspawn machine kube1 holding the same binary.
   */
  async runningHost(config: HostConfig = {}): Promise<SandboxHost> {
    const host = this.host((root) => ({
      container: { manager: 'nspawn' },
      ...(typeof config === 'function' ? config(root) : config),
    }));
    const legacy = host.path('/usr/local/bin/aks-flex-node');
    mkdirSync(dirname(legacy), { recursive: true });
    copyFileSync(buildTestAgent(this.agentsDir(), { version: '1.0.0', embedsUpgrader: true }), legacy);
    mkdirSync(host.path('/var/lib/machines/kube1/usr/local/bin'), { recursive: true });
    copyFileSync(legacy, host.path('/var/lib/machines/kube1/usr/local/bin/aks-flex-node'));
    writeFileSync(host.path('/etc/aks-flex-node/daemon-state.json'), JSON.stringify({ activeMachine: 'kube1' }));
    if (host.cliJson(['migrate']).status !== 0) throw new Error('migrate failed');
    if (host.systemctl('start', host.unit).status !== 0) throw new Error(`${host.unit} did not start`);
    if (!(await host.waitRunning(host.slotPath('blue')))) throw new Error(`${host.unit} does not run the blue slot`);
    return host;
  }

  agentsDir(): string {
    return join(this.base, 'agents');
  }

  async close(): Promise<void> {
    await this.systemd.stop();
    this.cleanup();
  }
}

export class SandboxHost {
  readonly unit: string;
  readonly recoveryUnit: string;

  constructor(
    readonly systemd: PrivateSystemd,
    readonly root: string,
    name: string,
    config: Record<string, unknown>,
  ) {
    this.unit = `${name}.service`;
    this.recoveryUnit = `${name}-recovery.service`;
    const { service, health, agent, ...rest } = config as { service?: object; health?: object; agent?: object };
    const file = {
      agent: { args: ['agent'], ...agent },
      service: { manager: 'systemd', unit: this.unit, recoveryUnit: this.recoveryUnit, ...FAST_SERVICE, ...service },
      health: { ...FAST_HEALTH, ...health },
      container: { manager: 'none' },
      cluster: { manager: 'none' },
      ...rest,
    };
    mkdirSync(this.path('/etc/aks-flex-node'), { recursive: true });
    writeFileSync(this.path('/etc/aks-flex-node/agent-upgrade.json'), JSON.stringify(file, null, 2));
  }

  /** The configuration and layout the CLI sees for this host. */
  async configuration(): Promise<{ readonly config: UpgraderConfig; readonly layout: SlotLayout }> {
    const config = await loadConfig(new NodeFileSystem(), { root: this.root });
    if (!config.ok) throw new Error(config.failure.message);
    const layout = deriveLayout({ root: config.value.root, agentName: config.value.agent.name, ...config.value.paths });
    if (!layout.ok) throw new Error(layout.failure.message);
    return { config: config.value, layout: layout.value };
  }

  /**
   * The systemd adapter as the CLI composes it, but driven from this (test) process: its
   * commands run inside the namespace and MainPID is read from the namespace's procfs.
   */
  async serviceManager(restartDelayMs = 500): Promise<SystemdServiceManager> {
    const { config, layout } = await this.configuration();
    return new SystemdServiceManager({
      fs: new NodeFileSystem(),
      runner: this.systemd.runner(),
      clock: new SystemClock(),
      unit: config.service.unit,
      unitDir: layout.unitDir,
      assets: systemdAssets(config, layout, TEST_IDENTITY),
      restartDelayMs,
      procRoot: this.systemd.procRoot,
    });
  }

  path(hostPath: string): string {
    return join(this.root, hostPath);
  }

  slotPath(slot: 'blue' | 'green'): string {
    return realpathSync(this.path(`/usr/local/lib/aks-flex-node/aks-flex-node-${slot}`));
  }

  /** The slot a link names, or its raw text. */
  link(name: 'current' | 'last-good'): string | null {
    const path = this.path(`/usr/local/lib/aks-flex-node/aks-flex-node-${name}`);
    if (!existsSync(path) && !isLink(path)) return null;
    return readlinkSync(path).replace(/^.*aks-flex-node-/, '');
  }

  recordExists(): boolean {
    return existsSync(this.path('/etc/aks-flex-node/agent-upgrade-signal.json'));
  }

  record(): Record<string, unknown> {
    return JSON.parse(readFileSync(this.path('/etc/aks-flex-node/agent-upgrade-signal.json'), 'utf8')) as Record<
      string,
      unknown
    >;
  }

  state(): { readonly quarantine: readonly string[] } {
    return JSON.parse(readFileSync(this.path('/etc/aks-flex-node/agent-upgrade-state.json'), 'utf8')) as {
      quarantine: string[];
    };
  }

  /** Runs this repo's CLI inside the namespace with `--root`. */
  cli(args: readonly string[], timeoutMs = 90_000): CommandResult {
    return this.systemd.run(process.execPath, [CLI, ...args, '--root', this.root], { timeoutMs });
  }

  /** Runs the CLI with `--json` and returns the exit status and the parsed document. */
  cliJson(
    args: readonly string[],
    timeoutMs?: number,
  ): { readonly status: number | null; readonly doc: Record<string, unknown>; readonly stderr: string } {
    const result = this.cli([...args, '--json'], timeoutMs);
    let doc: Record<string, unknown>;
    try {
      doc = JSON.parse(result.stdout) as Record<string, unknown>;
    } catch {
      throw new Error(`not JSON (status ${result.status}): ${result.stdout}\n${result.stderr}`);
    }
    return { status: result.status, doc, stderr: result.stderr };
  }

  systemctl(...args: string[]): CommandResult {
    return this.systemd.run('systemctl', args);
  }

  /** Whether systemd has run the recovery unit at least once (its main process exited). */
  recoveryRan(): boolean {
    return !['', '0'].includes(this.systemd.property(this.recoveryUnit, 'ExecMainExitTimestampMonotonic'));
  }

  activeState(): string {
    return this.systemd.property(this.unit, 'ActiveState');
  }

  mainExecutable(): string | null {
    return this.systemd.mainExecutable(this.unit);
  }

  /** Waits until the agent's main process runs `path` (bounded). */
  async waitRunning(path: string, timeoutMs = 20_000): Promise<boolean> {
    return this.systemd.waitFor(() => this.mainExecutable() === path, timeoutMs);
  }
}

/** The identity the CLI would have: this repo's bin as the upgrader, the default config file. */
export const TEST_IDENTITY: HostIdentity = {
  euid: 0,
  arch: process.arch === 'arm64' ? 'arm64' : 'amd64',
  pid: process.pid,
  command: 'vitest',
  invocation: { executable: CLI, configPath: null },
};

function isLink(path: string): boolean {
  try {
    readlinkSync(path);
    return true;
  } catch {
    return false;
  }
}

/** The suite runs bin/agent-upgrade inside the namespace, so dist/ must match src/. */
export function assertBuildCurrent(): void {
  const stale = staleOutputs(join(REPO, 'src'), join(REPO, 'dist'));
  if (stale.length > 0)
    throw new Error(
      `dist/ is older than src/ (${stale.slice(0, 3).join(', ')}): run \`npm run build\` before the real-systemd suite`,
    );
}

/** Source files whose compiled output is missing or older than they are. */
function staleOutputs(sourceDir: string, outputDir: string): string[] {
  const stale: string[] = [];
  for (const entry of readdirSync(sourceDir, { withFileTypes: true })) {
    const source = join(sourceDir, entry.name);
    if (entry.isDirectory()) stale.push(...staleOutputs(source, join(outputDir, entry.name)));
    else if (entry.name.endsWith('.ts')) {
      const output = join(outputDir, entry.name.replace(/\.ts$/, '.js'));
      if (!existsSync(output) || statSync(output).mtimeMs < statSync(source).mtimeMs) stale.push(source);
    }
  }
  return stale;
}
