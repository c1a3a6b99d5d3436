import type { Failure } from '../../../domain/common/failure.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import { withQuarantined } from '../../../domain/node/record/upgrade-state.js';
import { asFailure, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import type { HealthObserver } from '../health/health-progress.js';
import type { Activation, ActivationDependencies } from './activation.js';
import { serviceIsActive } from './activation-support.js';
import { realSlotPath, type NodeCondition } from './slot-effects.js';

export interface RollbackOutcome {
  /**
   * `unchanged`: current already was last-good. `reverted`: last-good proved unhealthy, was
   * quarantined, and the binary that ran before runs again. `degraded`: going back failed too.
   */
  readonly outcome: 'rolled-back' | 'unchanged' | 'reverted' | 'degraded';
  readonly changed: boolean;
  readonly from: SlotName;
  readonly to: SlotName;
  readonly restarted: boolean;
  readonly failure: Failure | null;
  readonly quarantined: boolean;
  readonly node: NodeCondition | null;
  /** Slots that are not regular files, left for an operator to remove (`E_LAYOUT` each). */
  readonly brokenSlots: readonly Failure[];
}

/** What a caller of `rollback` may pass. */
export interface RollbackRequest {
  /** Told how the health wait goes, last-good's and, should it fail, the previous binary's. */
  readonly onHealthProgress?: HealthObserver | undefined;
}

/**
 * `rollback`: current back to last-good's slot, then the service and the container follow. A
 * last-good that does not come up healthy is quarantined first (the evidence), then the binary
 * that ran before is restored, so an operator's rollback never leaves the agent down when going
 * back is possible.
 */
/** What `rollback` uses of the activation's dependencies. */
export type RollbackDependencies = Pick<
  ActivationDependencies,
  'fs' | 'services' | 'logger' | 'engine' | 'config' | 'states' | 'effects'
>;

export async function rollbackToLastGood(
  deps: RollbackDependencies,
  activation: Activation,
  observe?: HealthObserver,
): Promise<RollbackOutcome> {
  await activation.refuseWhilePending();
  await activation.interrupted.resolve({ restart: 'sync' });
  const serviceActive = await serviceIsActive(deps.services);
  const facts = await deps.engine.inspect();
  const report = await deps.engine.rollback();
  const base = {
    changed: report.changed,
    from: report.from,
    to: report.to,
    restarted: report.changed && serviceActive,
    quarantined: false,
    node: null,
    brokenSlots: report.brokenSlots,
  };
  if (!report.changed) return { ...base, outcome: 'unchanged', failure: null };
  const { effects } = deps;
  try {
    if (serviceActive) {
      await deps.services.restart({ resetFailed: true });
      await effects.expectHealthy(realSlotPath(facts, report.to), 'known-good', undefined, observe);
    }
    await effects.syncContainer(slotPath(deps.engine.layout, report.to));
    return { ...base, outcome: 'rolled-back', failure: null };
  } catch (error) {
    const cause = asFailure(error);
    deps.logger.error(
      { [LogKeys.code]: cause.code, [LogKeys.slot]: report.to },
      `Last-good (${report.to}) did not come up; going back to ${report.from}.`,
    );
    const quarantined = await quarantineSlot(deps, report.to);
    try {
      await effects.switchBackTo(report.from, facts, serviceActive, observe);
      return { ...base, outcome: 'reverted', failure: cause, quarantined };
    } catch (second) {
      asFailure(second);
      return { ...base, outcome: 'degraded', failure: cause, quarantined, node: await effects.condition() };
    }
  }
}

/** Records the slot's binary as failed; false when the state cannot be written (reported, not fatal). */
async function quarantineSlot(deps: RollbackDependencies, slot: SlotName): Promise<boolean> {
  try {
    const { states } = deps;
    const digest = (await deps.fs.hashFile(slotPath(deps.engine.layout, slot), deps.config.artifact.maxBinaryBytes))
      .sha256;
    await states.write(withQuarantined(unwrap(await states.read()), digest));
    return true;
  } catch (error) {
    asFailure(error);
    return false;
  }
}
