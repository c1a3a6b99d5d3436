import { failureOutcome, RETRY_POLICY } from '../../../domain/node/daemon/retry-policy.js';
import type { UpgradeRecord } from '../../../domain/node/record/upgrade-record.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { OperationStore, TerminalStatus } from '../../../ports/node/operation-store.js';
import { LogKeys } from '../../common/log-keys.js';
import { translatePortError } from '../../common/translate-port-error.js';

/** Publication attempts per decision, with doubling backoff from 1 s (1+2+4+8+16 s ≈ 31 s). */
export const PUBLISH_ATTEMPTS_MAX = 5;

export interface PublishDependencies {
  readonly store: OperationStore;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Publishes the record's terminal status with bounded, doubling backoff (docs/protocol.md#publication-rules);
 * true once published — a deleted operation counts — false when every attempt failed.
 */
export async function publishOutcome(
  deps: PublishDependencies,
  record: UpgradeRecord,
  status: TerminalStatus,
): Promise<boolean> {
  const operation = record.operation;
  let delayMs = RETRY_POLICY.publishFirstMs;
  for (let attempt = 1; attempt <= PUBLISH_ATTEMPTS_MAX; attempt += 1) {
    try {
      const written = await deps.store.publish(operation, status);
      // Refused after InProgress was accepted: the cluster's policy changed under the upgrade.
      if (written.kind === 'forbidden')
        deps.logger.error(
          { [LogKeys.operation]: operation.name },
          "This node may no longer write the operation's status; its result stays unpublished.",
        );
      return true;
    } catch (error) {
      const translated = translatePortError(error);
      // No retry fixes credentials the cluster keeps refusing: the daemon must exit instead.
      if (translated === null || failureOutcome(translated).kind === 'terminal-failure') throw error;
      deps.logger.warn(
        { [LogKeys.operation]: operation.name, [LogKeys.code]: translated.code, attempt },
        'Publishing the upgrade result failed; retrying.',
      );
      if (attempt < PUBLISH_ATTEMPTS_MAX) await deps.clock.sleep(delayMs);
      delayMs *= 2;
    }
  }
  deps.logger.error(
    { [LogKeys.operation]: operation.name },
    'The upgrade result could not be published; the record is kept and publication will be retried.',
  );
  return false;
}
