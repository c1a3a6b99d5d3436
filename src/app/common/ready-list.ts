/**
 * The part of a work queue that waits: items ready to be taken, in order, and a wait that ends
 * when one is added, when the owner says something changed (it closed), or when the caller
 * aborts. The daemon's WorkQueue and the controller's ReconcileQueue keep their own rules for
 * what may be added and build on this.
 */
export class ReadyList<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | null = null;

  get length(): number {
    return this.items.length;
  }

  push(item: T): void {
    this.items.push(item);
    this.notify();
  }

  shift(): T | undefined {
    return this.items.shift();
  }

  /** Ends the current wait, if any: the owner's state changed (it closed). */
  notify(): void {
    this.wake?.();
  }

  /** Resolves at the next push or notify, or when `signal` aborts. One waiter at a time. */
  changed(signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
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
