import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { AgentUpgradeRequest, OperationStore } from '../../ports/operation-store.js';
import { LogKeys } from '../log-keys.js';
import type { ManagedSession } from '../managed/managed-session.js';

/** A busy lock or a stuck publication is retried after this long; failures back off to the max. */
const GATE_RETRY_MS = 5_000;
const FAILURE_RETRY_MS = 30_000;

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

/**
 * The daemon's life: the startup gate first (nothing else changes the host before it opened),
 * then AgentUpgrade operations one at a time as the store delivers them. A busy lock requeues the
 * operation; a sidecar's upgrade goes back through the gate; a self-hosted hand-over ends the
 * work of this process, which systemd is about to restart.
 */
export async function runDaemon(deps: DaemonDependencies, signal: AbortSignal): Promise<DaemonExit> {
  const { session, logger } = deps;
  if ((await openGate(deps, signal)) === 'handed-over') return await waitForStop(signal);
  if (!deps.handleOperations) {
    logger.info({}, 'MachineOperation handling is disabled (cluster.operationMode "disable").');
    await waitForStop(signal);
    return { kind: 'stopped' };
  }
  const pending = new WorkQueue<AgentUpgradeRequest>();
  const feeding = feed(deps.store, pending, signal, logger);
  try {
    for (;;) {
      const request = await pending.take(signal);
      if (request === null) return { kind: 'stopped' };
      const fields = { [LogKeys.operation]: request.operation.name };
      logger.info(fields, `Handling AgentUpgrade ${request.operation.name}.`);
      const result = await session.handle(request);
      if (!result.ok) {
        logger.error(
          { ...fields, code: result.failure.code },
          `AgentUpgrade ${request.operation.name} could not be handled: ${result.failure.message}`,
        );
        pending.later(request, FAILURE_RETRY_MS);
        continue;
      }
      const outcome = result.value;
      switch (outcome.kind) {
        case 'finished':
          break;
        case 'requeue':
          logger.info(
            { ...fields, afterMs: outcome.afterMs },
            'The host lock is busy; the operation is retried later.',
          );
          pending.later(request, outcome.afterMs);
          break;
        case 'gate':
          if ((await openGate(deps, signal)) === 'handed-over') return await waitForStop(signal);
          break;
        case 'handed-over':
          logger.info(fields, 'The agent restarts into the candidate; the restarted daemon publishes the result.');
          return await waitForStop(signal);
      }
    }
  } finally {
    pending.close();
    await feeding;
  }
}

/** Runs the startup gate until it opens (or this process handed over), retrying bounded. */
async function openGate(deps: DaemonDependencies, signal: AbortSignal): Promise<'open' | 'handed-over' | 'stopped'> {
  for (;;) {
    if (signal.aborted) return 'stopped';
    const result = await deps.session.start();
    if (result.ok && result.value.kind === 'open') return 'open';
    if (result.ok && result.value.kind === 'closed') return 'handed-over';
    const retryMs = result.ok ? GATE_RETRY_MS : FAILURE_RETRY_MS;
    if (result.ok)
      deps.logger.warn(
        { reason: result.value.kind === 'stuck' ? result.value.reason : 'busy', retryMs },
        `The startup gate is ${result.value.kind}; retrying.`,
      );
    else
      deps.logger.error({ code: result.failure.code, retryMs }, `The startup gate failed: ${result.failure.message}`);
    await deps.clock.sleep(retryMs, signal).catch(() => undefined);
  }
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
    logger.error({}, `The MachineOperation watch stopped: ${(error as Error).message}`);
    pending.close(error);
  }
}

async function waitForStop(signal: AbortSignal): Promise<DaemonExit> {
  await new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  return { kind: 'handed-over' };
}

/** Operations waiting to be handled, in arrival order; `later` puts one back after a delay. */
class WorkQueue<T> {
  private readonly items: T[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private wake: (() => void) | null = null;
  private failure: unknown = null;
  private closed = false;

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.wake?.();
  }

  later(item: T, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.push(item);
    }, delayMs);
    this.timers.add(timer);
  }

  close(failure: unknown = null): void {
    this.closed = true;
    this.failure ??= failure;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.wake?.();
  }

  /** The next item; `null` once stopped. Rethrows the feeder's failure. */
  async take(signal: AbortSignal): Promise<T | null> {
    for (;;) {
      if (this.failure !== null) throw this.failure;
      const item = this.items.shift();
      if (item !== undefined) return item;
      if (this.closed || signal.aborted) return null;
      await new Promise<void>((resolve) => {
        const done = (): void => {
          signal.removeEventListener('abort', done);
          this.wake = null;
          resolve();
        };
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
  }
}
