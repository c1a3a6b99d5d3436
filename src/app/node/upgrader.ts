import { failure, ok, type Result } from '../../domain/common/failure.js';
import type { SlotLayout } from '../../domain/node/layout/slot-layout.js';
import type { ArchiveExtractor } from '../../ports/node/archive-extractor.js';
import type { ArtifactSource } from '../../ports/common/artifact-source.js';
import type { ReleaseTrust } from '../../ports/common/release-trust.js';
import type { FileSystem } from '../../ports/node/file-system.js';
import type { HostLock } from '../../ports/node/host-lock.js';
import type { Logger } from '../../ports/common/logger.js';
import type { ServiceManager } from '../../ports/node/service-manager.js';
import type { Activation, ActivateRequest, ActivationDependencies } from './activation/activation.js';
import { rollbackToLastGood, type RollbackOutcome, type RollbackRequest } from './activation/rollback-to-last-good.js';
import { activationResult, type ActivationResult, type PreflightReport } from './activation/activation-report.js';
import {
  installFromUrl,
  previewInstall,
  type InstallDependencies,
  type InstallRequest,
} from './activation/install-from-url.js';
import { fetchToFile, type FetchReport, type FetchToFileRequest } from './artifact/fetch-to-file.js';
import type { UpgraderConfig } from './config/upgrader-config.js';
import { runDaemon, type DaemonExit } from './daemon/run-daemon.js';
import { asFailure, raise, runUseCase } from '../common/failure-signal.js';
import { hostFingerprint } from './host-fingerprint.js';
import type { HostIdentity } from './host-identity.js';
import type { LayoutEngine, MigrationReport } from './layout/layout-engine.js';
import { describeHolder, withHostLock } from './lock/with-host-lock.js';
import type { ManagedSession, ManagedSessionFactory, ManagedSessionOptions } from './managed/managed-session.js';
import { recover, type RecoverDependencies, type RecoverReport, type RecoverRequest } from './managed/recover.js';
import { readStatus, type StatusDependencies, type StatusReport } from './status/read-status.js';
import { runSupervisor } from './supervise/run-supervisor.js';
import type { OperationStoreFactory } from './managed/session-options.js';
import type { Clock } from '../../ports/common/clock.js';

/** What the composition root gives an Upgrader; the arch-bound use cases resolve on first use. */
export interface UpgraderDependencies {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly fs: FileSystem;
  readonly lock: HostLock;
  readonly services: ServiceManager;
  readonly engine: LayoutEngine;
  readonly source: ArtifactSource;
  readonly extractor: ArchiveExtractor;
  readonly trust: ReleaseTrust | null;
  readonly clock: Clock;
  readonly openOperationStore: OperationStoreFactory;
  readonly recoverDependencies: RecoverDependencies;
  readonly statusDependencies: StatusDependencies;
  /** Throw E_WRONG_ARCH on a host the releases are not built for. */
  readonly activation: () => Activation;
  readonly activationDependencies: () => ActivationDependencies;
  readonly sessions: () => ManagedSessionFactory;
}

/**
 * The use cases an operator, the CLI or an embedding agent calls. Every host-changing use case
 * runs under the host lock; every one returns a Result whose failure carries a stable code.
 */
export class Upgrader {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;

  constructor(private readonly deps: UpgraderDependencies) {
    this.config = deps.config;
    this.layout = deps.layout;
  }

  /** Downloads, verifies and extracts the release's one member to a file (no host change, no lock). */
  fetch(request: FetchToFileRequest): Promise<Result<FetchReport>> {
    return runUseCase(() => {
      const arch = this.deps.identity.arch;
      if (arch === null && request.member === undefined) {
        raise(failure('E_WRONG_ARCH', 'releases are built for amd64 and arm64 only; name the member with --member'));
      }
      // Unlocked and unchecked: it may write anywhere but over what the upgrader manages.
      return fetchToFile({ ...this.deps, arch: arch ?? 'amd64', refuseOutputsIn: this.layout }, request);
    });
  }

  status(): Promise<Result<StatusReport>> {
    return runUseCase(() => readStatus(this.deps.statusDependencies));
  }

  /** `migrate`: an interrupted direct activation is resolved first, then the layout converges. */
  migrate(): Promise<Result<MigrationReport>> {
    return this.locked(async () => {
      const activation = this.deps.activation();
      await activation.refuseWhilePending();
      await activation.interrupted.resolve({ restart: 'sync' });
      return this.deps.engine.migrate();
    });
  }

  /**
   * `rollback`: current back to last-good, then restart and health-check the service;
   * `onHealthProgress` is told how the health wait goes (as for `activate`).
   */
  rollback(request: RollbackRequest = {}): Promise<Result<RollbackOutcome>> {
    return this.locked(() =>
      rollbackToLastGood(this.deps.activationDependencies(), this.deps.activation(), request.onHealthProgress),
    );
  }

  /** `activate CANDIDATE --preflight`: the plan, with no change and no lock. */
  preflight(request: ActivateRequest): Promise<Result<PreflightReport>> {
    return runUseCase(() => this.deps.activation().preflight(request));
  }

  /** `activate CANDIDATE`: install, switch, restart, wait healthy, roll back on failure. */
  async activate(request: ActivateRequest): Promise<ActivationResult> {
    // Only what a caller may ask for: a signed version is what `install` learnt, never a claim.
    const { candidatePath, requestedVersion, allowDowngrade, force, signedTarget, acceptUnsigned } = request;
    const { signal, onHealthProgress } = request;
    const direct = { candidatePath, requestedVersion, allowDowngrade, force, signedTarget, acceptUnsigned, signal };
    return activationResult(await this.locked(() => this.deps.activation().activate({ ...direct, onHealthProgress })));
  }

  /** `install --url … --preflight`: validates the request and shows the plan; downloads nothing. */
  previewInstall(request: InstallRequest): Promise<Result<PreflightReport>> {
    return runUseCase(() => previewInstall(this.installDependencies(), request));
  }

  /** `install --url …`: the artifact pipeline feeding the same activation. */
  async install(request: InstallRequest): Promise<ActivationResult> {
    return activationResult(await this.locked(() => installFromUrl(this.installDependencies(), request)));
  }

  /**
   * `recover [--message]`: the OnFailure unit's entry point. Without a pending managed upgrade it
   * changes nothing; with one it records the failure, rolls back when allowed and restarts the
   * agent (it takes the lock itself, waiting a bounded time for a live upgrader).
   */
  recover(request: RecoverRequest): Promise<Result<RecoverReport>> {
    return runUseCase(() => recover(this.deps.recoverDependencies, request));
  }

  /** `supervise`: the built-in supervisor runs the agent until `signal` aborts. */
  supervise(signal: AbortSignal): Promise<Result<void>> {
    return runUseCase(() => runSupervisor(this.deps, signal));
  }

  /**
   * `daemon`: the startup gate, then MachineOperations from the cluster until `signal` aborts.
   * `selfExecutable` is the real path this process runs (self-hosted mode), which must be one of
   * the agent's slots or its legacy file.
   */
  daemon(signal: AbortSignal, options: { readonly selfExecutable: string | null }): Promise<Result<DaemonExit>> {
    return runUseCase(async () => {
      await this.refuseSelfHostedOutsideSlots(options.selfExecutable);
      const store = await this.deps.openOperationStore();
      const session = this.deps.sessions()({ store, selfExecutable: options.selfExecutable });
      const { clock, logger, config } = this.deps;
      const handleOperations = config.cluster.operationMode !== 'disable';
      if (this.deps.trust === null)
        logger.warn(
          { weakness: 'unsigned' },
          'Releases are not signed (no trust section, docs/security.md#signed-releases): whoever can create a MachineOperation can run any binary as root on this node.',
        );
      return runDaemon(
        { session, store, clock, logger: logger.child({ component: 'daemon' }), handleOperations },
        signal,
      );
    });
  }

  /** The managed path of one daemon process: its startup gate and AgentUpgrade operations. */
  managed(options: ManagedSessionOptions): Result<ManagedSession> {
    return resolved(() => this.deps.sessions()(options));
  }

  /**
   * Self-hosted means this process is the agent, started from a slot (or the legacy file). Run
   * from anywhere else, its own executable would never be the candidate, and every upgrade would
   * be judged a failure and rolled back.
   */
  private async refuseSelfHostedOutsideSlots(self: string | null): Promise<void> {
    if (this.config.agent.mode !== 'self-hosted') return;
    const { blue, green, entry } = this.layout;
    for (const path of [blue, green, entry]) {
      const resolved = await this.deps.fs.resolve(path);
      if (self !== null && resolved.kind === 'resolved' && resolved.path === self) return;
    }
    raise(
      failure(
        'E_CONFIG',
        'agent.mode is "self-hosted" but this process does not run from the agent\'s slots: set agent.mode to "sidecar" to run the daemon beside the agent',
      ),
    );
  }

  private installDependencies(): InstallDependencies {
    const { source, extractor, trust } = this.deps;
    return { ...this.deps.activationDependencies(), source, extractor, trust, activation: this.deps.activation() };
  }

  /**
   * Runs `body` under the host lock. The layout is validated first, so a lock path that resolves
   * outside `--root` is refused before anything is written there. A failure after the host
   * changed says so (`hostChanged`), judged by observing the host before and after.
   */
  private locked<T>(body: () => Promise<T>): Promise<Result<T>> {
    return runUseCase(async () => {
      await this.deps.engine.inspect();
      const run = await withHostLock(this.deps.lock, async () => {
        const before = await hostFingerprint(this.deps.fs, this.layout, this.config);
        return this.observingChange(before, body);
      });
      if (run.kind === 'busy') {
        raise(failure('E_LOCK_BUSY', `the host lock ${this.layout.lock} is held by ${describeHolder(run.holder)}`));
      }
      return run.value;
    });
  }

  private async observingChange<T>(before: string, body: () => Promise<T>): Promise<T> {
    try {
      return await body();
    } catch (error) {
      const cause = asFailure(error);
      const after = await hostFingerprint(this.deps.fs, this.layout, this.config).catch(() => null);
      return raise(after === before ? cause : { ...cause, hostChanged: true });
    }
  }
}

/** A use case the composition root builds on first use; refusing to build it is a failure. */
function resolved<T>(build: () => T): Result<T> {
  try {
    return ok(build());
  } catch (error) {
    return { ok: false, failure: asFailure(error) };
  }
}
