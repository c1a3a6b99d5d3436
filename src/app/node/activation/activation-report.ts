import type { Failure } from '../../../domain/common/failure.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import type { NodeCondition } from './slot-effects.js';

export interface ActivationReport {
  /**
   * `unchanged`: an identical candidate; nothing was installed or switched. `degraded`: the
   * activation failed and so did going back; `node` says where the host stands.
   */
  readonly outcome: 'activated' | 'unchanged' | 'rolled-back' | 'degraded';
  readonly from: SlotName;
  readonly to: SlotName;
  readonly candidateSha256: string;
  readonly candidateVersion: string;
  /** Whether the service was restarted and its health checked (an inactive one stays stopped). */
  readonly restarted: boolean;
  /** Why the activation was rolled back, when it was. */
  readonly failure: Failure | null;
  /** Whether the failed candidate's digest was recorded in the quarantine. */
  readonly quarantined: boolean;
  /** Why going back failed (`degraded` only). */
  readonly rollbackFailure: Failure | null;
  /** The node as observed after a `degraded` outcome. */
  readonly node: NodeCondition | null;
}

export interface PreflightReport {
  readonly candidate: string;
  readonly candidateSha256: string;
  readonly activeBinary: string | null;
  readonly installTarget: string;
  readonly currentLink: string;
  readonly lastGoodLink: string;
  readonly initializeLayout: boolean;
  readonly candidateChanged: boolean;
  readonly actions: readonly string[];
}
