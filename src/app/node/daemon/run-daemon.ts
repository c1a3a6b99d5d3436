import type { Failure, Result } from '../../../domain/common/failure.js';
import {
  failureOutcome,
  RETRY_POLICY,
  retryDelayMs,
  type WorkOutcome,
} from '../../../domain/node/daemon/retry-policy.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { AgentUpgradeRequest, OperationStore } from '../../../ports/node/operation-store.js';
import { LogKeys } from '../../common/log-keys.js';
import type { HandleOutcome } from '../managed/agent-upgrade-handler.js';
import type { ManagedSession } from '../managed/managed-session.js';
import { raise, runUseCase } from '../../common/failure-signal.js';
import { VersionReportRetry } from './version-retry.js';
import { WorkQueue, workKey } from './work-queue.js';
import { messageOf } from '../../../domain/common/message-of.js';

export type DaemonExit =
  /** Asked to stop (SIGTERM). */
  | { readonly kind: 'stopped' }
  /** This process handed the agent over to its restarted self and waits to be replaced. */
  | { readonly kind: 'handed-over' };

export interface DaemonDependencies {
  readonly session: ManagedSession;
  readonly store: OperationStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `cluster.operationMode: "disable"`: run the startup gate, then handle no operations. */
  readonly handleOperations: boolean;
}

/** What the loop's steps share: the dependencies and the retries of a failed version report. */
interface DaemonRun extends DaemonDependencies {
  readonly versions: VersionReportRetry;
}

/**
 * The daemon's life: the startup gate first (nothing else changes the host before it opened),
 * then AgentUpgrade operations one at a time as the store delivers them. Work is queued by the
 * operation's identity and a retried operation is read again, as the cluster has it then; every
 * delay comes from the retry policy and runs on the clock. A sidecar's upgrade goes back through
 * the gate; a self-hosted hand-over ends the work of this process, which is about to restart.
 * Each opened gate reports the agent version to this machine's Node; a report that failed is
 * retried beside the work until it is written, and dropped at a hand-over (the restarted process
 * reports what it runs).
 */
export async function runDaemon(dependencies: DaemonDependencies, signal: AbortSignal): Promise<DaemonExit> {
  const versions = new VersionReportRetry(dependencies.session, dependencies.clock, dependencies.logger);
  try {
    return await serve({ ...dependencies, versions }, signal);
  } finally {
    await versions.close();
  }
}

async function serve(deps: DaemonRun, signal: AbortSignal): Promise<DaemonExit> {
  const { logger } = deps;
  if ((await openGate(deps, signal)) === 'handed-over') return await handOver(deps, signal);
  if (!deps.handleOperations) {
    logger.info({}, 'MachineOperation handling is disabled (cluster.operationMode "disable").');
    await waitForStop(signal);
    return { kind: 'stopped' };
  }
  const pending = new WorkQueue<AgentUpgradeRequest>(deps.clock, (request) => workKey(request.operation));
  const feeding = feed(deps.store, pending, signal, logger);
  /** Consecutive failures of each operation put back; its presence means it is a retry. */
  const failures = new Map<string, number>();
  try {
    for (;;) {
      const taken = await pending.take(signal);
      if (taken === null) return { kind: 'stopped' };
      // The first delivery is fresh from the watch; a retried one is read again.
      const request = failures.has(workKey(taken.operation)) ? await reread(deps, taken) : taken;
      if (request === null) {
        failures.delete(workKey(taken.operation));
        pending.forget(taken);
        continue;
      }
      const step = await handleOne(deps, request, signal);
      if (step === 'handed-over') return await handOver(deps, signal);
      // No retry fixes it, for this operation or any other: the daemon stops with it.
      if (step.kind === 'terminal-failure') raise(step.failure);
      const key = workKey(request.operation);
      const count = step.kind === 'retryable-failure' ? (failures.get(key) ?? 0) + 1 : 0;
      const delayMs = retryDelayMs(step, count);
      if (delayMs === null) {
        failures.delete(key);
        pending.forget(request);
      } else {
        failures.set(key, count);
        pending.later(request, delayMs);
      }
    }
  } finally {
    pending.close();
    await feeding;
  }
}

/** One operation through the session, as a work outcome (or the end of this process's work). */
async function handleOne(
  deps: DaemonRun,
  request: AgentUpgradeRequest,
  signal: AbortSignal,
): Promise<WorkOutcome | 'handed-over'> {
  const fields = { [LogKeys.operation]: request.operation.name };
  deps.logger.info(fields, `Handling AgentUpgrade ${request.operation.name}.`);
  const result = await deps.session.handle(request);
  if (!result.ok) {
    const outcome = failureOutcome(result.failure);
    deps.logger.error(
      { ...fields, code: result.failure.code, retried: outcome.kind === 'retryable-failure' },
      `AgentUpgrade ${request.operation.name} could not be handled: ${result.failure.message}`,
    );
    return outcome;
  }
  return afterHandled(deps, result.value, fields, signal);
}

async function afterHandled(
  deps: DaemonRun,
  outcome: HandleOutcome,
  fields: Record<string, string>,
  signal: AbortSignal,
): Promise<WorkOutcome | 'handed-over'> {
  switch (outcome.kind) {
    case 'finished':
      return { kind: 'done' };
    case 'requeue':
      deps.logger.info(
        { ...fields, afterMs: outcome.afterMs },
        'The host lock is busy; the operation is retried later.',
      );
      return { kind: 'requeue-after', afterMs: outcome.afterMs };
    case 'gate':
      return (await openGate(deps, signal)) === 'handed-over' ? 'handed-over' : { kind: 'done' };
    case 'handed-over':
      deps.logger.info(fields, 'The agent restarts into the candidate; the restarted daemon publishes the result.');
      return 'handed-over';
  }
}

/** The operation as the cluster has it now; `null` once it is gone (or cannot be read: retried). */
async function reread(deps: DaemonDependencies, request: AgentUpgradeRequest): Promise<AgentUpgradeRequest | null> {
  const read: Result<AgentUpgradeRequest | null> = await runUseCase(() => deps.store.read(request.operation));
  if (read.ok) return read.value;
  // Unreadable now (the API server is away): handle what was delivered; the handler's own
  // cluster writes skip an operation that became terminal meanwhile.
  return request;
}

/** Runs the startup gate until it opens (or this process handed over), retrying bounded. */
async function openGate(deps: DaemonRun, signal: AbortSignal): Promise<'open' | 'handed-over' | 'stopped'> {
  for (let failures = 0; ;) {
    if (signal.aborted) return 'stopped';
    const result = await deps.session.start();
    if (result.ok && result.value.kind === 'open') {
      deps.versions.ensure();
      return 'open';
    }
    if (result.ok && result.value.kind === 'closed') return 'handed-over';
    failures = result.ok ? 0 : failures + 1;
    const outcome: WorkOutcome = result.ok
      ? {
          kind: 'requeue-after',
          afterMs: result.value.kind === 'busy' ? RETRY_POLICY.lockBusyMs : RETRY_POLICY.gateStuckMs,
        }
      : failureOutcome(result.failure);
    // A failure no retry can fix (misconfiguration, refused credentials) ends the daemon, visibly.
    if (outcome.kind === 'terminal-failure') raise(outcome.failure);
    const retryMs = retryDelayMs(outcome, failures) ?? RETRY_POLICY.failureMaxMs;
    logGateRetry(deps.logger, result.ok ? result.value : result.failure, retryMs);
    await deps.clock.sleep(retryMs, signal).catch(() => undefined);
  }
}

function logGateRetry(
  logger: Logger,
  why: { readonly kind: string; readonly reason?: string } | Failure,
  retryMs: number,
) {
  if ('code' in why) logger.error({ code: why.code, retryMs }, `The startup gate failed: ${why.message}`);
  else
    logger.warn(
      { reason: why.kind === 'stuck' ? why.reason : 'busy', retryMs },
      `The startup gate is ${why.kind}; retrying.`,
    );
}

async function feed(
  store: OperationStore,
  pending: WorkQueue<AgentUpgradeRequest>,
  signal: AbortSignal,
  logger: Logger,
): Promise<void> {
  try {
    for await (const request of store.watch(signal)) pending.push(request);
  } catch (error) {
    // The store retries by itself; an error escaping it is a defect worth stopping for.
    logger.error({}, `The MachineOperation watch stopped: ${messageOf(error)}`);
    pending.close(error);
  }
}

/** This process's agent is about to restart: no version of it is reported any more. */
async function handOver(deps: DaemonRun, signal: AbortSignal): Promise<DaemonExit> {
  await deps.versions.close();
  return waitForStop(signal);
}

async function waitForStop(signal: AbortSignal): Promise<DaemonExit> {
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  return { kind: 'handed-over' };
}
