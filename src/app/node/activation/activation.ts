import { newActivationMarker } from '../../../domain/node/activation/activation-marker.js';
import { failure, type Failure } from '../../../domain/common/failure.js';
import { linkedSlot, type LayoutFacts } from '../../../domain/node/layout/host-facts.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import { describeStep, isLayoutStep, type ActivationStep } from '../../../domain/node/activation/activation-steps.js';
import { invariant } from '../../../domain/common/invariant.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import type { ActivationPlan } from '../../../domain/node/activation/upgrade-plan.js';
import {
  withCommittedVersion,
  withQuarantined,
  withSlotInfo,
  type UpgradeState,
} from '../../../domain/node/record/upgrade-state.js';
import { formatVersion } from '../../../domain/common/version.js';
import { decideCandidateSignature } from '../../../domain/node/activation/candidate-signature.js';
import type { CheckedCandidate } from '../artifact/check-candidate.js';
import type { HealthObserver } from '../health/health-progress.js';
import { asFailure, raise, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import type { MarkerStore } from '../record/marker-store.js';
import type { RecordStore } from '../record/record-store.js';
import type { StateStore } from '../state/state-store.js';
import { activeBinary, planDirect, serviceIsActive } from './activation-support.js';
import type { ActivationReport, PreflightReport } from './activation-report.js';
import { snapshotCandidate, type ActivateRequest, type ActivationInput } from './candidate-intake.js';
import { checkSignedCandidate, signatureRequest } from './signed-candidate-check.js';
import type { InterruptedActivation } from './interrupted-activation.js';
import { runSteps } from './run-steps.js';
import { realSlotPath, type SlotEffects } from './slot-effects.js';

import type { ActivationDependencies } from './activation-dependencies.js';
export type { ActivationDependencies };

export type { ActivateRequest, ActivationInput } from './candidate-intake.js';

type ReportBase = Omit<ActivationReport, 'outcome' | 'failure' | 'quarantined' | 'rollbackFailure' | 'node'>;

/**
 * The direct (host-driven) activation of a staged candidate (docs/protocol.md#direct-path).
 * The caller holds the host lock throughout. The candidate is checked before anything changes,
 * then snapshotted and compared with what was checked, so replacing its path later cannot change
 * what is activated. A durable marker exists from before the slot is written until the verdict,
 * so even a SIGKILL leaves enough for the next lock holder to roll back. The plan's steps run
 * through the step loop the managed path shares, and what a failed one means — propagate, put
 * current back, or roll back to the previous binary — is the domain's failure table
 * (docs/protocol.md#step-failures).
 */
export class Activation {
  private readonly records: RecordStore;
  private readonly states: StateStore;
  private readonly markers: MarkerStore;
  private readonly effects: SlotEffects;
  readonly interrupted: InterruptedActivation;

  constructor(private readonly deps: ActivationDependencies) {
    this.records = deps.records;
    this.states = deps.states;
    this.markers = deps.markers;
    this.effects = deps.effects;
    this.interrupted = deps.interrupted;
  }

  /** What `activate` would do, changing nothing and taking no lock. */
  async preflight(request: ActivateRequest): Promise<PreflightReport> {
    await this.refuseWhilePending();
    // The same refusal as activate's, without looking the target up: nothing is fetched either.
    unwrap(decideCandidateSignature(signatureRequest(this.deps, request)));
    const { layout } = this.deps.engine;
    const facts = await this.deps.engine.inspect();
    const candidate = await this.deps.fs.hashFile(request.candidatePath, this.deps.config.artifact.maxBinaryBytes);
    const active = await activeBinary(this.deps, facts);
    const plan = await planDirect(
      this.deps,
      facts,
      candidate.sha256,
      active?.digest ?? candidate.sha256,
      await serviceIsActive(this.deps.services),
      await this.deps.services.assetsCurrent(),
    );
    const interrupted =
      unwrap(await this.markers.read()) === null
        ? []
        : ['resolve the interrupted activation first (roll back unless its candidate proves healthy)'];
    return {
      candidate: request.candidatePath,
      candidateSha256: candidate.sha256,
      activeBinary: active?.path ?? null,
      installTarget: slotPath(layout, plan.targetSlot),
      currentLink: layout.current,
      lastGoodLink: layout.lastGood,
      initializeLayout: plan.initializeLayout,
      candidateChanged: plan.candidateChanged,
      actions: [
        ...interrupted,
        ...plan.steps.map((step) => describeStep(layout, step)),
        `roll back to ${slotPath(layout, plan.rollbackSlot)} if activation fails`,
      ],
    };
  }

  async activate(request: ActivationInput): Promise<ActivationReport> {
    const { engine } = this.deps;
    await this.refuseWhilePending();
    await this.interrupted.resolve({ restart: 'sync' });
    const isPrivate = request.candidateIsPrivate === true;
    // A snapshot an interrupted activation left behind is ours: gone before anything else.
    if (!isPrivate) await this.deps.fs.remove(engine.layout.candidateSnapshot);
    const serviceActive = await serviceIsActive(this.deps.services);
    // Everything that can refuse the candidate runs before the first change to the host.
    const known = unwrap(await this.states.read());
    const { checked, state } = await checkSignedCandidate(this.deps, request, known, await engine.inspect());
    await engine.migrate({ keep: isPrivate ? [request.candidatePath] : [] });
    const snapshot = isPrivate
      ? request.candidatePath
      : await snapshotCandidate(this.deps, request.candidatePath, checked.digest);
    try {
      const observed = await engine.inspect();
      // The snapshot is ours, not a stale temp of an interrupted write.
      const facts = { ...observed, staleTemps: observed.staleTemps.filter((path) => path !== snapshot) };
      const activeSlot = linkedSlot(facts, 'current');
      if (activeSlot === null) raise(failure('E_LAYOUT', 'the current link does not name a slot after migration'));
      const activeDigest = (
        await this.deps.fs.hashFile(slotPath(engine.layout, activeSlot), this.deps.config.artifact.maxBinaryBytes)
      ).sha256;
      const plan = await planDirect(this.deps, facts, checked.digest, activeDigest, serviceActive, true);
      const { signal, onHealthProgress: observe } = request;
      return await this.execute(plan, { snapshot, checked, state, facts, serviceActive, signal, observe });
    } finally {
      if (snapshot !== request.candidatePath) await this.deps.fs.remove(snapshot);
    }
  }

  /** The plan's steps through the shared step loop; a failed step is settled as the domain decides. */
  private async execute(plan: ActivationPlan, run: ActivationRun): Promise<ActivationReport> {
    const report: ReportBase = {
      from: plan.rollbackSlot === plan.targetSlot ? plan.activeSlot : plan.rollbackSlot,
      to: plan.targetSlot,
      candidateSha256: run.checked.digest,
      candidateVersion: formatVersion(run.checked.version),
      restarted: plan.steps.some((step) => step.kind === 'restart-service'),
    };
    const outcome = await runSteps(plan, (step) => this.runStep(step, run), run.signal);
    if (outcome.kind === 'completed') return this.commit(plan, run, report);
    const { decision } = outcome;
    if (decision.kind === 'roll-back') return this.undo(plan, run, report, outcome.cause, decision);
    // The marker goes only once current is back where it was, so a failed restore leaves it for
    // the next lock holder.
    if (decision.kind === 'restore-current') await this.deps.engine.pointCurrentAt(decision.to);
    if (plan.candidateChanged) await this.forgetActivation();
    throw outcome.error;
  }

  private async runStep(step: ActivationStep, run: ActivationRun): Promise<void> {
    const { engine, services } = this.deps;
    if (isLayoutStep(step))
      return engine.applyLayoutStep(step, { path: run.snapshot, digest: run.checked.digest, isPrivate: true });
    switch (step.kind) {
      case 'verify-candidate':
        // Done before the first change to the host; the plan lists it for `--preflight`.
        return;
      case 'mark-activation':
        return this.markers.write(
          newActivationMarker({
            previous: step.previous,
            candidate: step.candidate,
            candidateDigest: run.checked.digest,
            candidateVersion: formatVersion(run.checked.version),
            serviceActive: run.serviceActive,
          }),
        );
      case 'update-service-assets':
        await services.convergeAssets();
        return;
      case 'restart-service':
        // Planned, not a crash: the start limit of a recently restarted agent must not refuse it.
        await services.restart({ resetFailed: true });
        return;
      case 'wait-healthy':
        return this.effects.expectHealthy(realSlotPath(run.facts, step.slot), 'candidate', run.signal, run.observe);
      case 'watch-candidate':
        return this.effects.expectWatched(step.slot, run.checked.digest, step.windowMs, run.signal, run.observe);
      case 'sync-container':
        return this.effects.syncContainer(slotPath(engine.layout, step.slot));
      default:
        return invariant(false, `the direct path has no ${step.kind} step`);
    }
  }

  /**
   * After the switch: quarantine the candidate first (unless a signal, not the candidate, ended
   * the activation), then go back. The marker goes only once the host is back; when going back
   * fails it stays, so the next lock holder tries again, and the report says where the node is.
   */
  private async undo(
    plan: ActivationPlan,
    run: ActivationRun,
    report: ReportBase,
    cause: Failure,
    decision: { readonly to: SlotName; readonly quarantine: boolean },
  ): Promise<ActivationReport> {
    this.deps.logger.error(
      { [LogKeys.code]: cause.code, [LogKeys.slot]: plan.targetSlot },
      `Activation failed after the switch; rolling back to ${decision.to}.`,
    );
    let quarantined = false;
    if (decision.quarantine) {
      quarantined = await this.states.write(withQuarantined(run.state, run.checked.digest)).then(
        () => true,
        (error: unknown) => {
          asFailure(error);
          return false;
        },
      );
    }
    try {
      await this.effects.switchBackTo(decision.to, run.facts, report.restarted, run.observe);
    } catch (error) {
      const rollbackFailure = asFailure(error);
      this.deps.logger.error(
        { [LogKeys.code]: rollbackFailure.code },
        'Rolling back failed; the node needs attention.',
      );
      return {
        ...report,
        outcome: 'degraded',
        failure: cause,
        quarantined,
        rollbackFailure,
        node: await this.effects.condition(),
      };
    }
    if (plan.candidateChanged) await this.forgetActivation();
    return { ...report, outcome: 'rolled-back', failure: cause, quarantined, rollbackFailure: null, node: null };
  }

  /** The verdict is in: record the slot and the committed version, then drop the marker. */
  private async commit(plan: ActivationPlan, run: ActivationRun, report: ReportBase): Promise<ActivationReport> {
    const version = formatVersion(run.checked.version);
    let next = withSlotInfo(run.state, plan.targetSlot, { digest: run.checked.digest, version });
    if (plan.candidateChanged) next = withCommittedVersion(next, version);
    const stateFailure = await this.states.write(next).then(
      () => null,
      (error: unknown) => asFailure(error),
    );
    if (plan.candidateChanged) await this.forgetActivation();
    if (stateFailure !== null) {
      raise(
        failure(
          stateFailure.code,
          `activated ${plan.targetSlot} (version ${version}), but the upgrade state could not be recorded: ${stateFailure.message}`,
        ),
      );
    }
    this.deps.logger.info(
      { [LogKeys.from]: plan.activeSlot, [LogKeys.to]: plan.targetSlot },
      'Activated the candidate.',
    );
    return {
      ...report,
      outcome: plan.candidateChanged ? 'activated' : 'unchanged',
      failure: null,
      quarantined: false,
      rollbackFailure: null,
      node: null,
    };
  }

  /** The verdict is final: the window's document first, then the marker (docs/protocol.md#watch-window). */
  private async forgetActivation(): Promise<void> {
    await this.effects.discardWindow();
    await this.markers.delete();
  }

  async refuseWhilePending(): Promise<void> {
    const record = unwrap(await this.records.read());
    if (record !== null)
      raise(
        failure(
          'E_UPGRADE_PENDING',
          `a managed upgrade (${record.operation.name}) is in progress; the direct path waits for the daemon to finish it`,
        ),
      );
  }
}

interface ActivationRun {
  readonly snapshot: string;
  readonly checked: CheckedCandidate;
  readonly state: UpgradeState;
  readonly facts: LayoutFacts;
  readonly serviceActive: boolean;
  readonly signal: AbortSignal | undefined;
  readonly observe: HealthObserver | undefined;
}
