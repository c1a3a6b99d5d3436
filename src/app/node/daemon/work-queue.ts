import type { Clock } from '../../../ports/common/clock.js';
import type { OperationRef } from '../../../ports/node/operation-store.js';

/** The identity of an operation: a name re-created under a new uid is other work. */
export function workKey(operation: OperationRef): string {
  return `${operation.name}/${operation.uid ?? ''}`;
}

/**
 * Work items by identity, in arrival order, each at most once: an item delivered again while it
 * is queued or waiting to be retried is not added twice. `later` puts one back after a delay on
 * the clock, so a simulation drives the same queue on virtual time.
 */
export class WorkQueue<T> {
  private readonly ready: { readonly key: string; readonly item: T }[] = [];
  private readonly known = new Set<string>();
  private readonly stopping = new AbortController();
  private wake: (() => void) | null = null;
  private failure: unknown = null;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    private readonly keyOf: (item: T) => string,
  ) {}

  /** Queues `item` unless the same work is queued or waiting already. */
  push(item: T): void {
    const key = this.keyOf(item);
    if (this.closed || this.known.has(key)) return;
    this.known.add(key);
    this.ready.push({ key, item });
    this.wake?.();
  }

  /** The work is done with: the next delivery of it is new work. */
  forget(item: T): void {
    this.known.delete(this.keyOf(item));
  }

  /** Queues `item` again after `delayMs` (it stays known meanwhile). */
  later(item: T, delayMs: number): void {
    const key = this.keyOf(item);
    this.known.add(key);
    void this.clock.sleep(delayMs, this.stopping.signal).then(
      () => {
        if (this.closed) return;
        this.ready.push({ key, item });
        this.wake?.();
      },
      () => undefined,
    );
  }

  close(failure: unknown = null): void {
    this.closed = true;
    this.failure ??= failure;
    this.stopping.abort();
    this.wake?.();
  }

  /** The next item; `null` once stopped. Rethrows the feeder's failure. */
  async take(signal: AbortSignal): Promise<T | null> {
    for (;;) {
      if (this.failure !== null) throw this.failure;
      const next = this.ready.shift();
      if (next !== undefined) return next.item;
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
