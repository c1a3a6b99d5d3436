import { interruptedActivationFor } from '../../src/app/activation/interrupted-activation.js';
import { createHash } from 'node:crypto';
import { TarGzExtractor } from '../../src/adapters/archive/tar-gz-extractor.js';
import { MemoryClock } from '../../src/adapters/memory/memory-clock.js';
import { MemoryContainerRootfs } from '../../src/adapters/memory/memory-container-rootfs.js';
import { MemoryFileSystem, type RebootMode } from '../../src/adapters/memory/memory-file-system.js';
import { MemoryHostLock } from '../../src/adapters/memory/memory-host-lock.js';
import { MemoryOperationStore } from '../../src/adapters/memory/memory-operation-store.js';
import { MemoryProcessRunner } from '../../src/adapters/memory/memory-process-runner.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/memory/memory-service-manager.js';
import { FLEX_PROFILE, type UpgraderConfig } from '../../src/app/config/upgrader-config.js';
import { LayoutEngine } from '../../src/app/layout/layout-engine.js';
import { AgentUpgradeHandler } from '../../src/app/managed/agent-upgrade-handler.js';
import { HostEffects } from '../../src/app/managed/host-effects.js';
import { recover } from '../../src/app/managed/recover.js';
import { StartupGate } from '../../src/app/managed/startup-gate.js';
import { RecordStore } from '../../src/app/record/record-store.js';
import { StateStore } from '../../src/app/state/state-store.js';
import { ArtifactError } from '../../src/domain/port-errors.js';
import { deriveLayout, type SlotLayout } from '../../src/domain/slot-layout.js';
import type { ArtifactRequest, ArtifactSource, ArtifactStream } from '../../src/ports/artifact-source.js';
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
  health: { timeoutMs: 30_000, stableMs: 3_000, pollMs: 250 },
};

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
 * the clock. `daemon()` builds a new process over it — a handler, a gate and `recover` with a
 * fresh instance id and nothing carried in memory.
 */
export class ManagedWorld {
  readonly clock = new MemoryClock();
  readonly store = new MemoryOperationStore({ clock: this.clock });
  readonly source = new MemoryArtifactSource();
  readonly runner = new MemoryProcessRunner();
  readonly behaviours = new Map<string, AgentBehaviour>();
  readonly logger = new RecordingLogger();
  lock = new MemoryHostLock();
  fs: MemoryFileSystem;
  services: MemoryServiceManager;
  container: MemoryContainerRootfs;
  private instances = 0;

  constructor(initialVersion = '1.0.0') {
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

  daemon(selfExecutable: string | null = null, config: UpgraderConfig = CONFIG) {
    this.instances += 1;
    const instanceId = this.instances.toString(16).padStart(32, '0');
    const engine = new LayoutEngine(this.fs, this.services, this.logger, {
      layout: LAYOUT,
      binaryMaxBytes: CONFIG.artifact.maxBinaryBytes,
      euid: 0,
    });
    const records = new RecordStore(this.fs, LAYOUT.record);
    const states = new StateStore(this.fs, LAYOUT.state);
    const effects = new HostEffects({
      fs: this.fs,
      services: this.services,
      container: this.container,
      engine,
      config: CONFIG,
    });
    this.scriptVersions();
    const base = {
      fs: this.fs,
      services: this.services,
      container: this.container,
      runner: this.runner,
      clock: this.clock,
      logger: this.logger,
      engine,
      config,
      arch: 'amd64' as const,
    };
    let handedOver = false;
    const gate = new StartupGate({
      effects,
      records,
      states,
      store: this.store,
      services: this.services,
      clock: this.clock,
      logger: this.logger,
      config: CONFIG,
      mode: config.agent.mode,
      instanceId,
      selfExecutable,
      handedOver: () => handedOver,
    });
    const interrupted = interruptedActivationFor({
      fs: this.fs,
      services: this.services,
      container: this.container,
      engine,
      config: CONFIG,
      logger: this.logger,
    });
    const handler = new AgentUpgradeHandler({
      ...base,
      lock: this.lock,
      store: this.store,
      records,
      states,
      source: this.source,
      extractor: new TarGzExtractor(),
      instanceId,
      interrupted,
    });
    return {
      instanceId,
      gate,
      /** A daemon's start: the gate first, then (once open) the layout converged, as every start does. */
      start: async () => {
        const outcome = await gate.run();
        if (outcome.kind === 'open') await engine.migrate();
        return outcome;
      },
      handler: {
        handle: async (request: Parameters<AgentUpgradeHandler['handle']>[0]) => {
          const outcome = await handler.handle(request);
          if (outcome.kind === 'handed-over') handedOver = true;
          return outcome;
        },
      },
      recover: (message: string) =>
        recover(
          {
            lock: this.lock,
            records,
            effects,
            services: this.services,
            clock: this.clock,
            logger: this.logger,
            config: CONFIG,
            interrupted,
          },
          message,
        ),
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
    for (const path of [`${LAYOUT.slotDir}/.aks-flex-node-blue.tmp-download`, LAYOUT.blue, LAYOUT.green]) {
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
