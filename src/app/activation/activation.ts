import type { HostArchitecture } from '../../domain/archive-rules.js';
import type { Sha256 } from '../../domain/digest.js';
import { failure, type Failure } from '../../domain/failure.js';
import { linkedSlot, type LayoutFacts } from '../../domain/host-facts.js';
import { slotPath } from '../../domain/slot-layout.js';
import type { SlotName } from '../../domain/slot.js';
import { describeStep, planActivation, type ActivationPlan } from '../../domain/upgrade-plan.js';
import { withCommittedVersion, withQuarantined, withSlotInfo, type UpgradeState } from '../../domain/upgrade-state.js';
import { formatVersion, parseVersion, type Version } from '../../domain/version.js';
import type { Clock } from '../../ports/clock.js';
import type { ContainerRootfs } from '../../ports/container-rootfs.js';
import type { FileSystem } from '../../ports/file-system.js';
import type { Logger } from '../../ports/logger.js';
import type { ProcessRunner } from '../../ports/process-runner.js';
import type { ServiceManager } from '../../ports/service-manager.js';
import { checkCandidate, type CheckedCandidate } from '../artifact/check-candidate.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { FailureSignal, raise, unwrap } from '../failure-signal.js';
import type { LayoutEngine, RollbackReport } from '../layout/layout-engine.js';
import { LogKeys } from '../log-keys.js';
import { RecordStore } from '../record/record-store.js';
import { StateStore } from '../state/state-store.js';
import { translatePortError } from '../translate-port-error.js';
import type { ActivationReport, PreflightReport } from './activation-report.js';

export interface ActivationDependencies {
  readonly fs: FileSystem;
  readonly services: ServiceManager;
  readonly container: ContainerRootfs;
  readonly runner: ProcessRunner;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly engine: LayoutEngine;
  readonly config: UpgraderConfig;
  readonly arch: HostArchitecture;
}

export interface ActivateRequest {
  readonly candidatePath: string;
  /**
   * The candidate is already a private copy in the slot directory (a verified download) and the
   * caller migrated the layout first: no snapshot is taken and no migration runs (its temp sweep
   * would remove the candidate).
   */
  readonly candidateIsPrivate?: boolean;
  readonly requestedVersion?: string | undefined;
  readonly allowDowngrade?: boolean | undefined;
  /** Accept a candidate whose digest is quarantined. */
  readonly force?: boolean | undefined;
}

/**
 * The direct (host-driven) activation of a staged candidate (SPEC §1, notes/protocol.md "Direct
 * path"). The caller holds the host lock throughout. The candidate is checked before anything
 * changes, then snapshotted and compared with what was checked, so replacing its path later
 * cannot change what is activated; after the switch, any failure to restart, become healthy or
 * sync the container rolls back to the previous binary.
 */
export class Activation {
  private readonly records: RecordStore;
  private readonly states: StateStore;

  constructor(private readonly deps: ActivationDependencies) {
    this.records = new RecordStore(deps.fs, deps.engine.layout.record);
    this.states = new StateStore(deps.fs, deps.engine.layout.state);
  }

  /** What `activate` would do, changing nothing and taking no lock. */
  async preflight(request: ActivateRequest): Promise<PreflightReport> {
    await this.refuseWhilePending();
    const { layout } = this.deps.engine;
    const facts = await this.deps.engine.inspect();
    const candidate = await this.deps.fs.hashFile(request.candidatePath, this.deps.config.artifact.maxBinaryBytes);
    const active = await this.activeBinary(facts);
    const plan = await this.plan(facts, candidate.sha256, active?.digest ?? candidate.sha256, await this.serviceActive(), await this.deps.services.assetsCurrent());
    return {
      candidate: request.candidatePath,
      candidateSha256: candidate.sha256,
      activeBinary: active?.path ?? null,
      installTarget: slotPath(layout, plan.targetSlot),
      currentLink: layout.current,
      lastGoodLink: layout.lastGood,
      initializeLayout: plan.initializeLayout,
      candidateChanged: plan.candidateChanged,
      actions: [...plan.steps.map((step) => describeStep(layout, step)), `roll back to ${slotPath(layout, plan.rollbackSlot)} if activation fails`],
    };
  }

  async activate(request: ActivateRequest): Promise<ActivationReport> {
    await this.refuseWhilePending();
    // A snapshot an interrupted activation left behind is ours: gone before anything else.
    if ((await this.deps.fs.lstat(this.snapshotPath())) !== null) await this.deps.fs.remove(this.snapshotPath());
    const serviceActive = await this.serviceActive();
    const state = unwrap(await this.states.read());
    // Everything that can refuse the candidate runs before the first change to the host.
    const before = await this.deps.engine.inspect();
    const checked = await this.check(request.candidatePath, request, state, linkedSlot(before, 'current'));
    if (request.candidateIsPrivate !== true) await this.deps.engine.migrate();
    const snapshot = request.candidateIsPrivate === true ? request.candidatePath : await this.snapshot(request.candidatePath, checked.digest);
    try {
      const observed = await this.deps.engine.inspect();
      // The snapshot is ours, not a stale temp of an interrupted write.
      const facts = { ...observed, staleTemps: observed.staleTemps.filter((path) => path !== snapshot) };
      const activeSlot = linkedSlot(facts, 'current');
      if (activeSlot === null) raise(failure('E_LAYOUT', 'the current link does not name a slot after migration'));
      const activeDigest = (await this.deps.fs.hashFile(slotPath(this.deps.engine.layout, activeSlot), this.deps.config.artifact.maxBinaryBytes)).sha256;
      const plan = await this.plan(facts, checked.digest, activeDigest, serviceActive, true);
      return await this.execute(plan, snapshot, checked, state, facts);
    } finally {
      if (snapshot !== request.candidatePath) await this.deps.fs.remove(snapshot);
    }
  }

  /** `rollback`: current back to last-good's slot, then the service and the container follow. */
  async rollbackToLastGood(): Promise<RollbackReport & { readonly restarted: boolean }> {
    await this.refuseWhilePending();
    const serviceActive = await this.serviceActive();
    const facts = await this.deps.engine.inspect();
    const report = await this.deps.engine.rollback();
    if (report.changed) await this.rollBack(report.to, facts, serviceActive);
    return { ...report, restarted: report.changed && serviceActive };
  }

  private async execute(plan: ActivationPlan, snapshot: string, checked: CheckedCandidate, state: UpgradeState, facts: LayoutFacts): Promise<ActivationReport> {
    const { engine, services, logger } = this.deps;
    const report = {
      from: plan.rollbackSlot === plan.targetSlot ? plan.activeSlot : plan.rollbackSlot,
      to: plan.targetSlot,
      candidateSha256: checked.digest,
      candidateVersion: formatVersion(checked.version),
      restarted: plan.steps.some((step) => step.kind === 'restart-service'),
    };
    let switched = false;
    for (const step of plan.steps) {
      try {
        switch (step.kind) {
          case 'restart-service':
            await services.restart();
            break;
          case 'wait-healthy':
            await this.expectHealthy(realSlotPath(facts, step.slot));
            break;
          case 'sync-container':
            await this.syncContainer(slotPath(engine.layout, step.slot));
            break;
          default:
            await engine.applyLayoutStep(step, snapshot, checked.digest);
            if (step.kind === 'switch-current') switched = true;
        }
      } catch (error) {
        const cause = asFailure(error);
        const serviceStep = step.kind === 'restart-service' || step.kind === 'wait-healthy' || step.kind === 'sync-container';
        // Before the switch and the service steps nothing runs the candidate; with nowhere else
        // to go (an identical candidate and last-good on the same slot) there is nothing to undo.
        if ((!switched && !serviceStep) || plan.rollbackSlot === plan.targetSlot) throw error;
        logger.error({ [LogKeys.code]: cause.code, [LogKeys.slot]: plan.targetSlot }, `Activation failed after the switch; rolling back to ${plan.rollbackSlot}.`);
        await this.rollBack(plan.rollbackSlot, facts, report.restarted);
        await this.states.write(withQuarantined(state, checked.digest));
        return { ...report, outcome: 'rolled-back', failure: cause };
      }
    }
    let next = withSlotInfo(state, plan.targetSlot, { digest: checked.digest, version: formatVersion(checked.version) });
    if (plan.candidateChanged) next = withCommittedVersion(next, formatVersion(checked.version));
    await this.states.write(next);
    logger.info({ [LogKeys.from]: plan.activeSlot, [LogKeys.to]: plan.targetSlot }, 'Activated the candidate.');
    return { ...report, outcome: plan.candidateChanged ? 'activated' : 'unchanged', failure: null };
  }

  /**
   * Back to the previous binary: current first (the host link), then the service, then the
   * container copy. Every step is idempotent; a failure here is reported, not hidden.
   */
  private async rollBack(previous: SlotName, facts: LayoutFacts, restart: boolean): Promise<void> {
    await this.deps.engine.pointCurrentAt(previous);
    if (restart) {
      await this.deps.services.restart();
      await this.expectHealthy(realSlotPath(facts, previous));
    }
    if ((await this.deps.container.activeMachine()) !== null) await this.syncContainer(slotPath(this.deps.engine.layout, previous));
  }

  private async expectHealthy(expectedPath: string): Promise<void> {
    const verdict = await this.deps.services.waitHealthy(expectedPath, this.deps.config.health);
    if (verdict.kind === 'healthy') return;
    raise(failure('E_UNHEALTHY', verdict.kind === 'unhealthy' ? `the agent did not become healthy: ${verdict.reason}` : 'the agent is not running'));
  }

  private async syncContainer(sourcePath: string): Promise<void> {
    const machine = await this.deps.container.activeMachine();
    if (machine === null) return;
    const written = await this.deps.container.install(machine, sourcePath);
    const copy = await this.deps.container.digest(machine);
    if (copy === null || copy.sha256 !== written.sha256) raise(failure('E_DIGEST_MISMATCH', `the copy in machine ${machine} does not match the host binary`));
  }

  private async check(path: string, request: ActivateRequest, state: UpgradeState, activeSlot: SlotName | null): Promise<CheckedCandidate> {
    const { config } = this.deps;
    return checkCandidate(this.deps, {
      path,
      arch: this.deps.arch,
      allowScripts: config.agent.allowScripts,
      maxBinaryBytes: config.artifact.maxBinaryBytes,
      requestedVersion: request.requestedVersion === undefined ? null : unwrap(parseRequestedVersion(request.requestedVersion)),
      currentVersion: activeSlot === null ? null : storedVersion(state, activeSlot),
      allowDowngrade: request.allowDowngrade === true,
      state,
      force: request.force === true,
    });
  }

  private async plan(facts: LayoutFacts, candidateDigest: Sha256, activeDigest: Sha256, serviceActive: boolean, serviceAssetsCurrent: boolean): Promise<ActivationPlan> {
    return unwrap(
      planActivation({
        layout: this.deps.engine.layout,
        facts,
        candidateDigest,
        activeDigest,
        serviceAssetsCurrent,
        serviceActive,
        containerPresent: (await this.deps.container.activeMachine()) !== null,
      }),
    );
  }

  /**
   * A private copy inside the slot directory (named like a temp of the blue slot, so a crash
   * leaves nothing a sweep would miss). It must hold exactly the bytes that were checked: a
   * candidate replaced since then is refused.
   */
  private snapshotPath(): string {
    const { layout } = this.deps.engine;
    return `${layout.slotDir}/.${layout.blue.slice(layout.slotDir.length + 1)}.tmp-candidate`;
  }

  private async snapshot(candidatePath: string, checkedDigest: Sha256): Promise<string> {
    const path = this.snapshotPath();
    const copied = await this.deps.fs.copyFileAtomic(candidatePath, path, { mode: 0o700, maxBytes: this.deps.config.artifact.maxBinaryBytes });
    if (copied.sha256 !== checkedDigest) {
      await this.deps.fs.remove(path);
      raise(failure('E_CANDIDATE_INVALID', `the candidate ${candidatePath} changed while it was being checked`));
    }
    return path;
  }

  private async activeBinary(facts: LayoutFacts): Promise<{ readonly path: string; readonly digest: Sha256 } | null> {
    const current = facts.current.kind === 'symlink' && facts.current.resolved.kind === 'file' ? facts.current.resolved.path : null;
    const path = current ?? (facts.entry.kind === 'file' ? this.deps.engine.layout.entry : null);
    if (path === null) return null;
    return { path, digest: (await this.deps.fs.hashFile(path, this.deps.config.artifact.maxBinaryBytes)).sha256 };
  }

  private async serviceActive(): Promise<boolean> {
    const activity = await this.deps.services.activity();
    if (activity === 'unknown') raise(failure('E_SERVICE', 'the agent service is in an unexpected state'));
    return activity === 'active' || activity === 'failed';
  }

  private async refuseWhilePending(): Promise<void> {
    const record = unwrap(await this.records.read());
    if (record !== null) raise(failure('E_UPGRADE_PENDING', `a managed upgrade (${record.operation.name}) is in progress; the direct path waits for the daemon to finish it`));
  }
}

function realSlotPath(facts: LayoutFacts, slot: SlotName): string {
  return slot === 'blue' ? facts.canonical.blue : facts.canonical.green;
}

function storedVersion(state: UpgradeState, slot: SlotName): Version | null {
  const text = state.slots[slot]?.version ?? null;
  if (text === null) return null;
  const parsed = parseVersion(text);
  return parsed.ok ? parsed.value : null;
}

function parseRequestedVersion(text: string) {
  const parsed = parseVersion(text);
  return parsed.ok ? parsed : { ok: false as const, failure: failure('E_USAGE', '--version must be of the form [v]MAJOR.MINOR.PATCH') };
}

function asFailure(error: unknown): Failure {
  if (error instanceof FailureSignal) return error.failure;
  const translated = translatePortError(error);
  if (translated !== null) return translated;
  throw error;
}
