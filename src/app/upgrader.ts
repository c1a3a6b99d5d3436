import { fail, failure, ok, type Result } from '../domain/failure.js';
import { deriveLayout, type SlotLayout } from '../domain/slot-layout.js';
import type { FileSystem } from '../ports/file-system.js';
import type { HostLock } from '../ports/host-lock.js';
import type { Logger } from '../ports/logger.js';
import type { ServiceManager } from '../ports/service-manager.js';
import { Activation, type ActivateRequest, type ActivationDependencies } from './activation/activation.js';
import { rollbackToLastGood, type RollbackOutcome } from './activation/rollback-to-last-good.js';
import { hostFingerprint } from './host-fingerprint.js';
import { findRuleProblem } from './config/config-rules.js';
import type { ActivationReport, PreflightReport } from './activation/activation-report.js';
import {
  installFromUrl,
  previewInstall,
  type InstallDependencies,
  type InstallRequest,
} from './activation/install-from-url.js';
import { fetchToFile, type FetchReport, type FetchToFileRequest } from './artifact/fetch-to-file.js';
import { createContainer } from './composition/create-container.js';
import { HostEffects } from './managed/host-effects.js';
import { recover, type RecoverReport } from './managed/recover.js';
import { RecordStore } from './record/record-store.js';
import type { PortOverrides } from './composition/port-overrides.js';
import type { UpgraderConfig } from './config/upgrader-config.js';
import { asFailure, raise, runUseCase, unwrap } from './failure-signal.js';
import { runDaemon, type DaemonExit } from './daemon/run-daemon.js';
import type { HostIdentity } from './host-identity.js';
import type { LayoutEngine, MigrationReport } from './layout/layout-engine.js';
import { readStatus, type StatusReport } from './status/read-status.js';
import { Tokens } from './tokens.js';
import type { UpgraderParts } from './upgrader-parts.js';
import { runSupervisor } from './supervise/run-supervisor.js';
import { ManagedSession, type ManagedSessionOptions } from './managed/managed-session.js';

export type { UpgraderParts } from './upgrader-parts.js';

export interface UpgraderOptions {
  readonly config: UpgraderConfig;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly overrides?: PortOverrides;
}

/**
 * The use cases an operator, the CLI or an embedding agent calls. Every host-changing use case
 * runs under the host lock; every one returns a Result whose failure carries a stable code.
 */
export class Upgrader {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  private readonly fs: FileSystem;
  private readonly lock: HostLock;
  private readonly services: ServiceManager;
  private readonly engine: LayoutEngine;

  constructor(private readonly parts: UpgraderParts) {
    this.config = parts.config;
    this.layout = parts.layout;
    this.fs = parts.fs;
    this.lock = parts.lock;
    this.services = parts.services;
    this.engine = parts.engine;
  }

  /** Downloads, verifies and extracts the release's one member to a file (no host change, no lock). */
  fetch(request: FetchToFileRequest): Promise<Result<FetchReport>> {
    return runUseCase(() => {
      const arch = this.parts.identity.arch;
      if (arch === null && request.member === undefined) {
        raise(failure('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only; name the member with --member'));
      }
      // Unlocked and unchecked: it may write anywhere but over what the upgrader manages.
      return fetchToFile({ ...this.parts, arch: arch ?? 'amd64', refuseOutputsIn: this.layout }, request);
    });
  }

  status(): Promise<Result<StatusReport>> {
    return runUseCase(() =>
      readStatus({
        fs: this.fs,
        services: this.services,
        lock: this.lock,
        layout: this.layout,
        binaryMaxBytes: this.config.artifact.maxBinaryBytes,
      }),
    );
  }

  /** `migrate`: an interrupted direct activation is resolved first, then the layout converges. */
  migrate(): Promise<Result<MigrationReport>> {
    return this.locked(async () => {
      const activation = this.activation();
      await activation.refuseWhilePending();
      await activation.interrupted.resolve({ restart: 'sync' });
      return this.engine.migrate();
    });
  }

  /** `rollback`: current back to last-good, then restart and health-check the service. */
  rollback(): Promise<Result<RollbackOutcome>> {
    return this.locked(() => rollbackToLastGood(this.activationDependencies(), this.activation()));
  }

  /** `activate CANDIDATE --preflight`: the plan, with no change and no lock. */
  preflight(request: ActivateRequest): Promise<Result<PreflightReport>> {
    return runUseCase(() => this.activation().preflight(request));
  }

  /** `activate CANDIDATE`: install, switch, restart, wait healthy, roll back on failure. */
  activate(request: ActivateRequest): Promise<Result<ActivationReport>> {
    return this.locked(() => this.activation().activate({ ...request, candidateIsPrivate: false }));
  }

  /** `install --url … --preflight`: validates the request and shows the plan; downloads nothing. */
  previewInstall(request: InstallRequest): Promise<Result<PreflightReport>> {
    return runUseCase(() => previewInstall(this.installDependencies(), request));
  }

  /** `install --url …`: the artifact pipeline feeding the same activation. */
  install(request: InstallRequest): Promise<Result<ActivationReport>> {
    return this.locked(() => installFromUrl(this.installDependencies(), request));
  }

  /**
   * `recover [--message]`: the OnFailure unit's entry point. Without a pending managed upgrade it
   * changes nothing; with one it records the failure, rolls back when allowed and restarts the
   * agent (it takes the lock itself, waiting a bounded time for a live upgrader).
   */
  recover(message: string): Promise<Result<RecoverReport>> {
    return runUseCase(() => {
      const records = new RecordStore(this.fs, this.layout.record);
      const effects = new HostEffects({
        fs: this.fs,
        services: this.services,
        container: this.parts.container,
        engine: this.engine,
        config: this.config,
      });
      const { clock, logger } = this.parts;
      const interrupted = this.activation().interrupted;
      return recover(
        { lock: this.lock, records, effects, services: this.services, clock, logger, config: this.config, interrupted },
        message,
      );
    });
  }

  /** `supervise`: the built-in supervisor runs the agent until `signal` aborts. */
  supervise(signal: AbortSignal): Promise<Result<void>> {
    return runUseCase(() => runSupervisor(this.parts, signal));
  }

  /**
   * `daemon`: the startup gate, then MachineOperations from the cluster until `signal` aborts.
   * `selfExecutable` is the real path this process runs (self-hosted mode).
   */
  daemon(signal: AbortSignal, options: { readonly selfExecutable: string | null }): Promise<Result<DaemonExit>> {
    return runUseCase(async () => {
      const store = await this.parts.openOperationStore();
      const session = unwrap(this.managed({ store, selfExecutable: options.selfExecutable }));
      return runDaemon(
        {
          session,
          store,
          clock: this.parts.clock,
          logger: this.parts.logger.child({ component: 'daemon' }),
          handleOperations: this.config.cluster.operationMode !== 'disable',
        },
        signal,
      );
    });
  }

  /** The managed path of one daemon process: its startup gate and AgentUpgrade operations. */
  managed(options: ManagedSessionOptions): Result<ManagedSession> {
    const arch = this.parts.identity.arch;
    if (arch === null) return fail('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only');
    return ok(new ManagedSession(this.parts, arch, options));
  }

  private installDependencies(): InstallDependencies {
    return {
      ...this.activationDependencies(),
      source: this.parts.source,
      extractor: this.parts.extractor,
      activation: this.activation(),
    };
  }

  private activation(): Activation {
    return new Activation(this.activationDependencies());
  }

  private activationDependencies(): ActivationDependencies {
    const arch = this.parts.identity.arch;
    if (arch === null) raise(failure('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only'));
    return { ...this.parts, arch };
  }

  /**
   * Runs `body` under the host lock. The layout is validated first, so a lock path that resolves
   * outside `--root` is refused before anything is written there. A failure after the host
   * changed says so (`hostChanged`), judged by observing the host before and after.
   */
  private locked<T>(body: () => Promise<T>): Promise<Result<T>> {
    return runUseCase(async () => {
      await this.engine.inspect();
      const attempt = await this.lock.tryAcquire();
      if (attempt.kind === 'busy') {
        const known = attempt.holder;
        const holder =
          known === null
            ? 'another process'
            : known.kind === 'known'
              ? `pid ${known.pid} (${known.command})`
              : known.pid === null
                ? 'a process not visible from here'
                : `pid ${known.pid} (unknown process)`;
        raise(failure('E_LOCK_BUSY', `the host lock ${this.layout.lock} is held by ${holder}`));
      }
      try {
        const before = await hostFingerprint(this.fs, this.layout, this.config);
        return await this.observingChange(before, body);
      } finally {
        await attempt.lease.release();
      }
    });
  }

  private async observingChange<T>(before: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      const cause = asFailure(error);
      const after = await hostFingerprint(this.fs, this.layout, this.config).catch(() => null);
      return raise(after === before ? cause : { ...cause, hostChanged: true });
    }
  }
}

/** Builds an Upgrader from a resolved configuration and optional port overrides. */
export function createUpgrader(options: UpgraderOptions): Result<Upgrader> {
  const { config } = options;
  // A configuration an embedder built by hand gets the same cross-key rules as a parsed file.
  const problem = findRuleProblem(config);
  if (problem !== null) return fail('E_CONFIG', `${problem.keys.join(', ')}: ${problem.problem}`);
  const layout = deriveLayout({ root: config.root, agentName: config.agent.name, ...config.paths });
  if (!layout.ok) return fail('E_CONFIG', layout.failure.message);
  const container = createContainer({
    config,
    layout: layout.value,
    identity: options.identity,
    logger: options.overrides?.logger ?? options.logger,
    overrides: options.overrides ?? {},
  });
  const get = container;
  return ok(
    new Upgrader({
      config,
      layout: layout.value,
      identity: options.identity,
      logger: get.get(Tokens.Logger),
      fs: get.get(Tokens.FileSystem),
      lock: get.get(Tokens.HostLock),
      services: get.get(Tokens.ServiceManager),
      engine: get.get(Tokens.LayoutEngine),
      source: get.get(Tokens.ArtifactSource),
      extractor: get.get(Tokens.ArchiveExtractor),
      container: get.get(Tokens.ContainerRootfs),
      runner: get.get(Tokens.ProcessRunner),
      clock: get.get(Tokens.Clock),
      openOperationStore: get.get(Tokens.OperationStoreFactory),
    }),
  );
}
