import type { Failure, Result } from '../../../domain/common/failure.js';
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

/**
 * What `activate` and `install` answer an embedder: `ok` only when the candidate runs (activated,
 * or already running: unchanged). A candidate that failed and was rolled back is a failure with
 * its cause's code, so it cannot be taken for a success; `activation` then says what happened on
 * the host (`rolled-back`, or `degraded` when going back failed too, which is also
 * `hostChanged`). A failure before anything changed has no `activation`.
 */
export type ActivationResult =
  | { readonly ok: true; readonly value: ActivationReport }
  | { readonly ok: false; readonly failure: Failure; readonly activation: ActivationReport | null };

export function activationResult(result: Result<ActivationReport>): ActivationResult {
  if (!result.ok) return { ok: false, failure: result.failure, activation: null };
  const report = result.value;
  if (report.outcome !== 'rolled-back' && report.outcome !== 'degraded') return result;
  // A report that went back always names why; the fallback keeps the type total.
  const cause = report.failure ?? { code: 'E_UNHEALTHY', message: 'the candidate failed and was rolled back' };
  const failure = report.outcome === 'degraded' ? { ...cause, hostChanged: true } : cause;
  return { ok: false, failure, activation: report };
}
