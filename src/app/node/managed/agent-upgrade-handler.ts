import { RETRY_POLICY } from '../../../domain/node/daemon/retry-policy.js';
import { candidateChanges } from '../../../domain/node/activation/activation-steps.js';
import { parseOptionalSha256, type Sha256 } from '../../../domain/common/digest.js';
import { failure, type Failure } from '../../../domain/common/failure.js';
import { invariant } from '../../../domain/common/invariant.js';
import { redactUrlsInText } from '../../../domain/common/redacted-url.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import { parseDownloadUrl } from '../../../domain/common/url-policy.js';
import { COMPLETE_OUTCOME } from '../../../domain/node/recovery/policy-failures.js';
import {
  planManagedStaging,
  planManagedSwitch,
  type ManagedPlan,
} from '../../../domain/node/activation/upgrade-plan.js';
import { newUpgradeRecord, withFailure, type UpgradeRecord } from '../../../domain/node/record/upgrade-record.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { HostLock } from '../../../ports/node/host-lock.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { AgentUpgradeRequest, OperationStore } from '../../../ports/node/operation-store.js';
import type { InterruptedActivation } from '../activation/interrupted-activation.js';
import { ManagedSteps, type ManagedStepDependencies } from '../activation/managed-steps.js';
import { runSteps } from '../activation/run-steps.js';
import { asFailure, unwrap } from '../../common/failure-signal.js';
import { withHostLock } from '../lock/with-host-lock.js';
import { LogKeys } from '../../common/log-keys.js';
import { translatePortError } from '../../common/translate-port-error.js';

/** A busy host lock (a direct activation) is retried after this long, status untouched. */
const LOCK_BUSY_REQUEUE_MS = RETRY_POLICY.lockBusyMs;
export const IN_PROGRESS_MESSAGE = 'staging upgraded agent binary';

export type HandleOutcome =
  /** Try again later; nothing was changed. */
  | { readonly kind: 'requeue'; readonly afterMs: number }
  /** A terminal status was published for the operation (or it is gone, or not this node's to report on). */
  | { readonly kind: 'finished' }
  /** The switch is done and the restart scheduled: the restarted process publishes (self-hosted). */
  | { readonly kind: 'handed-over' }
  /** The record is left for the startup gate (sidecar after its restart, or a failure to publish). */
  | { readonly kind: 'gate' };

/** The managed steps' dependencies, and what the handler adds around them. */
export interface HandlerDependencies extends ManagedStepDependencies {
  readonly lock: HostLock;
  readonly store: OperationStore;
  readonly services: ServiceManager;
  readonly container: ContainerRootfs;
  readonly interrupted: InterruptedActivation;
  readonly instanceId: string;
}

/**
 * The managed path before the restart (docs/protocol.md#managed-path-rows-1-8): validate, lock,
 * record, InProgress, stage, switch, record the commit, hand over. Each row is durable before the
 * next; a crash between rows is resolved by the startup gate of the next process. Rows 5–7 are
 * the domain's activation plan, run by the step loop the direct path uses too; an identical
 * candidate is completed without a switch.
 */
export class AgentUpgradeHandler {
  constructor(private readonly deps: HandlerDependencies) {}

  async handle(request: AgentUpgradeRequest): Promise<HandleOutcome> {
    const { deps } = this;
    // A queued request for an operation that meanwhile became terminal must not start again.
    if (request.phase === 'Complete' || request.phase === 'Failed') return { kind: 'finished' };
    const invalid = validate(request, deps);
    if (invalid !== null) {
      await deps.store.publish(request.operation, {
        phase: 'Failed',
        reason: 'InvalidParameters',
        message: invalid.message,
      });
      return { kind: 'finished' };
    }
    const run = await withHostLock(deps.lock, () => this.underLock(request));
    return run.kind === 'busy' ? { kind: 'requeue', afterMs: LOCK_BUSY_REQUEUE_MS } : run.value;
  }

  private async underLock(request: AgentUpgradeRequest): Promise<HandleOutcome> {
    const { deps } = this;
    const existing = unwrap(await deps.records.read());
    // One upgrade at a time: the gate of this process resolves the existing record first.
    if (existing !== null)
      return existing.operation.name === request.operation.name
        ? { kind: 'gate' }
        : { kind: 'requeue', afterMs: LOCK_BUSY_REQUEUE_MS };
    // A direct activation that died before its verdict is resolved before anything is staged;
    // a self-hosted daemon that rolled back has scheduled its own restart and stops here.
    const restart = deps.config.agent.mode === 'self-hosted' ? 'scheduled' : 'sync';
    if ((await deps.interrupted.resolve({ restart })) === 'rolled-back' && restart === 'scheduled')
      return { kind: 'requeue', afterMs: LOCK_BUSY_REQUEUE_MS };
    // Row 3: the record exists before InProgress, which reconcilers do not re-queue.
    let record = unwrap(
      newUpgradeRecord({
        operationName: request.operation.name,
        operationUid: request.operation.uid,
        instanceId: deps.instanceId,
        activeMachine: await deps.container.activeMachine(),
      }),
    );
    await deps.records.write(record);
    // Row 4. When marking InProgress fails the record is kept, not deleted: the write may have
    // been applied with its response lost, and an InProgress operation without a record would
    // never be finished. The startup gate resolves the record (Failed, binaries untouched).
    const marked = await deps.store.markInProgress(request.operation, IN_PROGRESS_MESSAGE);
    if (marked.kind !== 'written') return this.notOurs(request, marked.kind);
    try {
      record = await this.stageAndSwitch(request, record);
    } catch (error) {
      return this.failBeforeHandOver(record, asFailure(error));
    }
    if (record.completed) return this.finishUnchanged(record);
    try {
      if (deps.config.agent.mode === 'self-hosted') {
        await deps.services.scheduleRestart();
        return { kind: 'handed-over' };
      }
      // A planned restart into the candidate is not a crash: it must not be refused because the
      // agent restarted often lately (an upgrade, a rollback and the next upgrade in minutes).
      await deps.services.restart({ resetFailed: true });
      return { kind: 'gate' };
    } catch (error) {
      // Row 8: the candidate may be what runs next; the gate rolls back and restarts.
      const current = unwrap(await deps.records.read()) ?? record;
      await deps.records.write(withFailure(current, { reason: 'ExecutionFailed', ...asFailure(error) }, true));
      return { kind: 'gate' };
    }
  }

  /**
   * Rows 5–7, as the domain plans them: the staging half up to the verified candidate, then the
   * switch half (or, for an identical candidate, the recorded completion), each run by the step
   * loop both paths share. Returns the record as last written: switch committed, or completed.
   */
  private async stageAndSwitch(request: AgentUpgradeRequest, initial: UpgradeRecord): Promise<UpgradeRecord> {
    const { deps } = this;
    const { engine } = deps;
    await engine.migrate();
    const steps = new ManagedSteps(deps, request, initial);
    const staging = unwrap(planManagedStaging(await engine.inspect()));
    await this.runPlan(staging, steps);
    const plan = await this.planSwitch(staging.activeSlot, steps).catch(async (error: unknown) => {
      // Between the two plans no step loop owns the download: a failed read must not leave it.
      await steps.discardStaging();
      throw error;
    });
    await this.runPlan(plan, steps);
    deps.logger.info(
      { [LogKeys.operation]: request.operation.name, [LogKeys.from]: plan.activeSlot, [LogKeys.to]: plan.targetSlot },
      plan.candidateChanged
        ? 'Switched to the candidate; handing over.'
        : 'The candidate already runs; nothing to switch.',
    );
    return steps.record;
  }

  /** The switch half, from what the host shows once the candidate is staged and verified. */
  private async planSwitch(previous: SlotName, steps: ManagedSteps): Promise<ManagedPlan> {
    const { engine, fs, config } = this.deps;
    const { digest } = steps.candidate;
    const activeDigest = (await fs.hashFile(slotPath(engine.layout, previous), config.artifact.maxBinaryBytes)).sha256;
    return unwrap(
      planManagedSwitch({
        facts: await engine.inspect(),
        previous,
        candidateDigest: digest,
        activeDigest,
        // Asked of an identical candidate only: a changed one reaches the container in the gate.
        containerDiffers: !candidateChanges(digest, activeDigest) && (await this.containerDiffers(activeDigest)),
      }),
    );
  }

  /** Whether the active container's copy is other than `digest` (read only; no machine: no). */
  private async containerDiffers(digest: Sha256): Promise<boolean> {
    const { container } = this.deps;
    const machine = await container.activeMachine();
    return machine !== null && (await container.digest(machine))?.sha256 !== digest;
  }

  /** One plan through the step loop; a failed step is settled as the domain decides, then thrown. */
  private async runPlan(plan: ManagedPlan, steps: ManagedSteps): Promise<void> {
    const outcome = await runSteps(plan, (step) => steps.run(step));
    if (outcome.kind === 'completed') return;
    const { decision } = outcome;
    // Nothing in a managed plan starts the candidate: every later rollback is the startup gate's.
    invariant(decision.kind !== 'roll-back', 'a managed plan never runs the candidate');
    // The running slot's binary was never written; the download is not kept.
    await steps.discardStaging();
    if (decision.kind === 'restore-current') await this.deps.engine.pointCurrentAt(decision.to);
    throw outcome.error;
  }

  /**
   * An identical candidate (docs/protocol.md#identical-candidate): Complete is recorded, so it is
   * the decided outcome, then published, then the record goes (publish before delete). Nothing
   * was switched, so there is no restart to hand over; if publishing fails, the record stays
   * and the startup gate publishes Complete later.
   */
  private async finishUnchanged(record: UpgradeRecord): Promise<HandleOutcome> {
    const { deps } = this;
    try {
      await deps.store.publish(record.operation, COMPLETE_OUTCOME);
    } catch (error) {
      if (translatePortError(error) === null) throw error;
      return { kind: 'gate' };
    }
    await deps.records.delete();
    return { kind: 'finished' };
  }

  /**
   * Row 4 was answered: the operation is gone, or this node may not report on it (an admission
   * policy refuses a selector-targeted operation). Nothing but the record changed: drop it, and
   * leave the operation alone rather than upgrade for a result nobody can publish.
   */
  private async notOurs(request: AgentUpgradeRequest, answer: 'gone' | 'forbidden'): Promise<HandleOutcome> {
    await this.deps.records.delete();
    this.deps.logger.warn(
      { [LogKeys.operation]: request.operation.name, answer },
      answer === 'gone'
        ? 'The operation was deleted before it started; nothing was changed.'
        : "This node may not write the operation's status (it targets machines by selector, or another machine); it is left alone.",
    );
    return { kind: 'finished' };
  }

  /**
   * Rows 5–7 failed: binaries are untouched (or rolled back). Publish Failed/ExecutionFailed,
   * then delete the record — publish before delete; if publishing fails the record stays with
   * its failure and the startup gate publishes it later.
   */
  private async failBeforeHandOver(record: UpgradeRecord, cause: Failure): Promise<HandleOutcome> {
    const { deps } = this;
    const latest = unwrap(await deps.records.read()) ?? record;
    // A release the publisher did not sign (or metadata that cannot be trusted) is the release's
    // fault, not this machine's: the reason lets a rollout stop before a second machine tries it.
    const reason = UNTRUSTED_CODES.has(cause.code) ? 'Untrusted' : 'ExecutionFailed';
    const failed = withFailure(latest, { reason, code: cause.code, message: redactUrlsInText(cause.message) }, false);
    await deps.records.write(failed);
    deps.logger.warn(
      { [LogKeys.operation]: record.operation.name, [LogKeys.code]: cause.code },
      'The upgrade failed before the switch was handed over.',
    );
    try {
      await deps.store.publish(failed.operation, {
        phase: 'Failed',
        reason,
        message: failed.failure?.message ?? cause.message,
      });
    } catch (error) {
      if (translatePortError(error) === null) throw error;
      return { kind: 'gate' };
    }
    await deps.records.delete();
    return { kind: 'finished' };
  }
}

const UNTRUSTED_CODES: ReadonlySet<string> = new Set(['E_UNTRUSTED', 'E_TRUST_METADATA']);

/** Row 1: parameters, checked before the lock; nothing is touched for an invalid request. */
function validate(request: AgentUpgradeRequest, deps: HandlerDependencies): Failure | null {
  const url = request.parameters.downloadURL;
  if (url === undefined || url.trim() === '')
    return failure('E_INVALID_URL', 'missing required parameter "downloadURL"');
  const digest = parseOptionalSha256(request.parameters.sha256);
  if (!digest.ok) return digest.failure;
  const downgrade = request.parameters['allowDowngrade'];
  if (downgrade !== undefined && downgrade !== 'true' && downgrade !== 'false')
    return failure('E_USAGE', 'parameter "allowDowngrade" must be "true" or "false"');
  const source = parseDownloadUrl(url, deps.config.artifact, digest.value !== null);
  return source.ok ? null : source.failure;
}
