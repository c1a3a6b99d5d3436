/**
 * Bridges the watch client's callbacks to an async consumer. Callbacks only push (they must not
 * throw: the client would swallow it); the consumer takes one item at a time, or learns that
 * nothing arrived within a deadline.
 */
export class EventQueue<T> {
  private readonly items: T[] = [];
  private wake: (() => void) | null = null;

  push(item: T): void {
    this.items.push(item);
    this.wake?.();
  }

  /** The next item, or `'idle'` after `timeoutMs` without one, or `'aborted'`. */
  async take(timeoutMs: number, signal: AbortSignal): Promise<T | 'idle' | 'aborted'> {
    const ready = this.items.shift();
    if (ready !== undefined) return ready;
    if (signal.aborted) return 'aborted';
    await new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(finish, timeoutMs);
      signal.addEventListener('abort', finish, { once: true });
      this.wake = finish;
    });
    const next = this.items.shift();
    if (next !== undefined) return next;
    return signal.aborted ? 'aborted' : 'idle';
  }
}
