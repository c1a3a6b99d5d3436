import type { Clock } from '../../../ports/common/clock.js';
import type { OperationRef } from '../../../ports/node/operation-store.js';
import { ReadyList } from '../../common/ready-list.js';

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
  private readonly ready = new ReadyList<T>();
  private readonly known = new Set<string>();
  private readonly stopping = new AbortController();
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
    this.ready.push(item);
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
        if (!this.closed) this.ready.push(item);
      },
      () => undefined,
    );
  }

  close(failure: unknown = null): void {
    this.closed = true;
    this.failure ??= failure;
    this.stopping.abort();
    this.ready.notify();
  }

  /** The next item; `null` once stopped. Rethrows the feeder's failure. */
  async take(signal: AbortSignal): Promise<T | null> {
    for (;;) {
      if (this.failure !== null) throw this.failure;
      // Checked by length, not by the value: an item may itself be undefined.
      if (this.ready.length > 0) return this.ready.shift() as T;
      if (this.closed || signal.aborted) return null;
      await this.ready.changed(signal);
    }
  }
}
