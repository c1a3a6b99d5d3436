import { failure } from '../../../domain/common/failure.js';
import { decideRecoverCommand } from '../../../domain/node/recovery/recover-policy.js';
import type { ContainerVerdict } from '../../../domain/node/recovery/recovery-vocabulary.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import { withFailure, type UpgradeRecord } from '../../../domain/node/record/upgrade-record.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { HostLock } from '../../../ports/node/host-lock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import { withHostLock } from '../lock/with-host-lock.js';
import type { InterruptedActivation } from '../activation/interrupted-activation.js';
import type { RecordStore } from '../record/record-store.js';
import type { HostEffects } from './host-effects.js';

/** Decisions one `recover` may take (I10); the longest path takes five. */
const RECOVER_STEPS_MAX = 16;

export interface RecoverDependencies {
  readonly lock: HostLock;
  readonly records: RecordStore;
  readonly effects: HostEffects;
  readonly services: ServiceManager;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: UpgraderConfig;
  readonly interrupted: InterruptedActivation;
}

export interface RecoverReport {
  readonly recovered: boolean;
  readonly rolledBackTo: SlotName | null;
}

/**
 * `recover --message M`, run by the OnFailure unit's script through the last-good binary
 * (docs/protocol.md#recovery-command-r1r3). Without a record it changes nothing: an ordinary agent
 * failure must not change the selected binary. With one it records the failure, rolls back when
 * allowed, and restarts the agent unit; the next daemon publishes. Idempotent (I11).
 */
export async function recover(deps: RecoverDependencies, request: RecoverRequest): Promise<RecoverReport> {
  const recordAtStart = unwrap(await deps.records.read());
  if (recordAtStart === null) return recoverDirect(deps, request);
  return underLock(deps, async () =>
    (await startedSinceFailure(deps, request))
      ? NOTHING_RECOVERED
      : recoverUnderLock(deps, request.message, recordAtStart),
  );
}

/** What the manager that ran `recover` says of the failure. */
export interface RecoverRequest {
  /** `--message M`: recorded as the failure (URLs redacted). */
  readonly message: string;
  /** `--failed-run ID`: the agent unit's run that failed (`$MONITOR_INVOCATION_ID`), when known. */
  readonly failedRun: string | null;
}

const NOTHING_RECOVERED: RecoverReport = { recovered: false, rolledBackTo: null };

/**
 * R1: whether the agent unit was started again after the run that failed, by the time `recover`
 * holds the lock. The failure was then handled meanwhile (the upgrader's health wait rolled back
 * and restarted, or an earlier `recover` did), and what runs now — maybe the next upgrade's
 * candidate — was never seen failing.
 */
async function startedSinceFailure(deps: RecoverDependencies, request: RecoverRequest): Promise<boolean> {
  if (request.failedRun === null) return false;
  const run = await deps.services.currentRun();
  if (run === null || run === request.failedRun) return false;
  deps.logger.info({ failedRun: request.failedRun, run }, 'Recover: the agent was started again since it failed.');
  return true;
}

/**
 * No managed upgrade: the agent failing is an ordinary failure, unless a direct activation died
 * before its verdict (its marker is left). Then the candidate that runs is proven bad: roll back
 * to the previous binary, quarantine it, restart the agent.
 */
async function recoverDirect(deps: RecoverDependencies, request: RecoverRequest): Promise<RecoverReport> {
  const marker = await deps.interrupted.pending();
  if (marker === null) return NOTHING_RECOVERED;
  return underLock(deps, async () => {
    if (await startedSinceFailure(deps, request)) return NOTHING_RECOVERED;
    const outcome = await deps.interrupted.resolve({ restart: 'sync', knownHealth: 'unhealthy' });
    return outcome === 'rolled-back'
      ? { recovered: true, rolledBackTo: marker.previous }
      : { recovered: outcome !== 'none', rolledBackTo: null };
  });
}

async function recoverUnderLock(
  deps: RecoverDependencies,
  message: string,
  recordAtStart: UpgradeRecord,
): Promise<RecoverReport> {
  let progress = { containerCopiedFrom: null as SlotName | null, agentRestarted: false };
  let rolledBackTo: SlotName | null = null;
  let container: ContainerVerdict = 'unknown';
  for (let step = 0; step < RECOVER_STEPS_MAX; step += 1) {
    const record = unwrap(await deps.records.read());
    const links = await deps.effects.links();
    if ((await deps.effects.activeMachine()) === null) container = 'not-applicable';
    const observed = { ...links, container };
    const decision = decideRecoverCommand({ record, recordAtStart, message, observed, progress });
    deps.logger.info(
      { [LogKeys.action]: decision.kind, [LogKeys.operation]: record?.operation.name },
      `Recover: ${decision.kind}.`,
    );
    switch (decision.kind) {
      case 'done':
        return { recovered: progress.agentRestarted, rolledBackTo };
      case 'record-failure':
        if (record !== null) await deps.records.write(withFailure(record, decision.failure, decision.recoveryRequired));
        break;
      case 'roll-back':
        await deps.effects.rollBackLinks(decision.to);
        rolledBackTo = decision.to;
        container = 'unknown';
        break;
      case 'restore-container':
        await deps.effects.copyIntoContainer(decision.from);
        progress = { ...progress, containerCopiedFrom: decision.from };
        break;
      case 'restart-agent':
        await deps.services.restart({ resetFailed: true });
        progress = { ...progress, agentRestarted: true };
        break;
    }
  }
  return raise(failure('E_SERVICE', `recover did not settle within ${RECOVER_STEPS_MAX} steps`));
}

/**
 * The lock may be held by a live upgrader whose own bounded health wait will roll back; wait for
 * it at most twice the health timeout, then give up without changes.
 */
async function underLock<T>(deps: RecoverDependencies, body: () => Promise<T>): Promise<T> {
  const run = await withHostLock(deps.lock, body, { clock: deps.clock, waitMs: 2 * deps.config.health.timeoutMs });
  if (run.kind === 'busy')
    raise(failure('E_LOCK_BUSY', 'the host lock stayed busy; the upgrader holding it rolls back on its own'));
  return run.value;
}
