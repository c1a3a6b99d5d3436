import { SOCKET_PROBE } from '../support/sandbox-upgrader.js';
import { createHash } from 'node:crypto';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import { MemoryFileSystem, type RebootMode } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryHostLock } from '../../src/adapters/node/memory/memory-host-lock.js';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import { MemoryProcessRunner } from '../../src/adapters/node/memory/memory-process-runner.js';
import { MemoryHealthProbe } from '../../src/adapters/node/memory/memory-health-probe.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { ArtifactError } from '../../src/domain/common/port-errors.js';
import type { ProbeOutcome, ProbeSettings } from '../../src/domain/node/health/probe-target.js';
import { deriveLayout, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import type { ArtifactRequest, ArtifactSource, ArtifactStream } from '../../src/ports/common/artifact-source.js';
import type { ReleaseTrust } from '../../src/ports/common/release-trust.js';
import type { AgentUpgradeRequest } from '../../src/ports/node/operation-store.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { orThrow, simProcess, type SimPorts } from './sim-process.js';
import { releaseArchive } from '../support/archive/index.js';
import { RecordingLogger } from '../support/recording-logger.js';

export const MEMBER = 'aks-flex-node-linux-amd64';
export const CANARY = 'CANARY-managed-sim-91c2';
export const agentScript = (version: string): string => `#!/bin/sh\n# aks-flex-node ${version}\n`;
export const digestOf = (text: string): string => createHash('sha256').update(text).digest('hex');

export const CONFIG: UpgraderConfig = {
  ...FLEX_PROFILE,
  agent: { ...FLEX_PROFILE.agent, allowScripts: true },
  service: { ...FLEX_PROFILE.service, manager: 'none' },
  health: { timeoutMs: 30_000, stableMs: 3_000, pollMs: 250, watchMs: 0 },
};

/** `health.probe` as the simulations configure it: the agent's health endpoint on a unix socket. */
export const SIM_PROBE: ProbeSettings = SOCKET_PROBE;

/** The same host with the upgrader as a separate sidecar daemon of another agent. */
export const SIDECAR_CONFIG: UpgraderConfig = { ...CONFIG, agent: { ...CONFIG.agent, mode: 'sidecar' } };

export const LAYOUT: SlotLayout = (() => {
  const derived = deriveLayout({ root: '/', agentName: CONFIG.agent.name, ...CONFIG.paths });
  if (!derived.ok) throw new Error(derived.failure.message);
  return derived.value;
})();

/** Release archives served from memory by URL (query included); the transport is not under test here. */
export class MemoryArtifactSource implements ArtifactSource {
  readonly archives = new Map<string, Uint8Array>();

  async open(request: ArtifactRequest): Promise<ArtifactStream> {
    const body = this.archives.get(request.url.revealForRequest());
    if (body === undefined)
      throw new ArtifactError('E_HTTP_STATUS', `download from ${request.url.toString()} failed: HTTP status 404`);
    return {
      contentLength: body.length,
      body: (async function* () {
        yield body;
      })(),
    };
  }
}

/**
 * Everything that survives a process: the disk, the cluster, the unit, the container rootfs,
 * the clock. `daemon()` builds a new process over it through the production composition.
 */
export class ManagedWorld {
  readonly clock: MemoryClock;
  readonly store: MemoryOperationStore;
  readonly source = new MemoryArtifactSource();
  readonly runner = new MemoryProcessRunner();
  readonly behaviours = new Map<string, AgentBehaviour>();
  /** The configuration every process of this host reads (a test may give it a health probe). */
  config: UpgraderConfig = CONFIG;
  /** A seeded fault in front of the agent's health endpoint: a non-null outcome replaces its answer. */
  probeFault: (() => ProbeOutcome | null) | null = null;
  /** `health.probe`, answered by the agent the unit runs now (after a reboot too). */
  readonly probe = new MemoryHealthProbe({ services: () => this.services, fault: () => this.probeFault?.() ?? null });
  readonly logger = new RecordingLogger();
  lock = new MemoryHostLock();
  fs: MemoryFileSystem;
  services: MemoryServiceManager;
  container: MemoryContainerRootfs;
  private instances = 0;
  /** The services' health waits run on a clock of their own unless the host shares one (see the constructor). */
  private readonly serviceClock: MemoryClock | undefined;

  /**
   * `sharedClock`: one clock for the processes and the agent's unit alike, for simulations about
   * time itself (a wall-clock step must reach the health wait to prove it changes nothing).
   */
  constructor(initialVersion = '1.0.0', sharedClock?: MemoryClock) {
    this.clock = sharedClock ?? new MemoryClock();
    this.serviceClock = sharedClock;
    this.store = new MemoryOperationStore({ clock: this.clock });
    this.fs = MemoryFileSystem.fromTree({
      [LAYOUT.entry]: { file: agentScript(initialVersion), mode: 0o755 },
      '/var/lib/machines/kube1/usr/local/bin/aks-flex-node': { file: agentScript(initialVersion), mode: 0o755 },
    });
    this.services = this.newServices();
    this.container = this.newContainer();
  }

  /** Serves a release of `version` and returns its URL (with a credential in the query) and digest. */
  publishRelease(version: string): { url: string; sha256: string } {
    const archive = releaseArchive(MEMBER, agentScript(version));
    const url = `https://releases.example/agent-${version}.tar.gz?sig=${CANARY}`;
    this.source.archives.set(url, archive);
    return { url, sha256: createHash('sha256').update(archive).digest('hex') };
  }

  /** The publisher's signatures, when the test signs its releases (config `trust`). */
  releaseTrust: ReleaseTrust | undefined = undefined;

  /** The ports as they are now (a reboot replaces the lock, the services and the container). */
  ports(): SimPorts {
    const { fs, clock, lock, services, container, runner, source, store, probe } = this;
    return {
      ...(this.releaseTrust === undefined ? {} : { releaseTrust: this.releaseTrust }),
      fileSystem: fs,
      clock,
      hostLock: lock,
      serviceManager: services,
      containerRootfs: container,
      processRunner: runner,
      artifactSource: source,
      operationStore: store,
      healthProbe: probe,
    };
  }

  /** A new process of the upgrader over this host (ports replaced as given, e.g. its clock). */
  process(config: UpgraderConfig = this.config, ports: Partial<SimPorts> = {}): Upgrader {
    this.scriptVersions();
    return simProcess({ ...this.ports(), ...ports }, config, this.logger);
  }

  /**
   * A new daemon process: the production composition over the memory platform, with a fresh
   * instance id and nothing carried in memory. Its methods throw a use case's failure.
   */
  daemon(selfExecutable: string | null = null, config: UpgraderConfig = this.config, ports: Partial<SimPorts> = {}) {
    this.instances += 1;
    const instanceId = this.instances.toString(16).padStart(32, '0');
    const upgrader = this.process(config, ports);
    const session = orThrow(upgrader.managed({ store: this.store, selfExecutable, instanceId }));
    return {
      instanceId,
      /** A daemon's start: the gate under the host lock, then the layout converged, as every start does. */
      start: async () => orThrow(await session.start()),
      handler: { handle: async (request: AgentUpgradeRequest) => orThrow(await session.handle(request)) },
      /** `recover`, as the recovery unit runs it; `failedRun` is the run systemd names as the failed one. */
      recover: async (message: string, failedRun: string | null = null) =>
        orThrow(await upgrader.recover({ message, failedRun })),
    };
  }

  /** Power loss: only what the durability mode keeps survives; the unit starts again at boot. */
  async reboot(mode: RebootMode): Promise<void> {
    this.fs = this.fs.reboot(mode);
    this.lock = new MemoryHostLock();
    this.services = this.newServices();
    this.container = this.newContainer();
    await this.services.restart();
  }

  private newServices(): MemoryServiceManager {
    return new MemoryServiceManager({
      fs: this.fs,
      execStart: LAYOUT.current,
      legacyExecStart: LAYOUT.entry,
      behaviourOf: (digest) => this.behaviours.get(digest) ?? 'healthy',
      ...(this.serviceClock !== undefined && { clock: this.serviceClock }),
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

  /** `<binary> version` prints the version written in the script: the staged download and both slots. */
  private scriptVersions(): void {
    const fs = this.fs;
    for (const path of [LAYOUT.downloadStaging, LAYOUT.legacyDownloadStaging, LAYOUT.blue, LAYOUT.green]) {
      this.runner.setBehaviour(path, async () => {
        const bytes = await fs.readFile(path, 1024 * 1024);
        const version = bytes === null ? null : /aks-flex-node (\S+)/.exec(new TextDecoder().decode(bytes))?.[1];
        return version === undefined || version === null
          ? { kind: 'exited', exitCode: 1, stdout: '', stderr: '' }
          : { kind: 'exited', exitCode: 0, stdout: `aks-flex-node version v${version}\n`, stderr: '' };
      });
    }
  }
}
