// Every timer the fake starts goes through here, so close() can cancel all of them and leave no
// handle keeping the test process (or a leak detector) busy.

export interface Cancel {
  (): void;
}

export class Timers {
  private readonly live = new Set<NodeJS.Timeout>();

  after(ms: number, fn: () => void): Cancel {
    const t = setTimeout(() => {
      this.live.delete(t);
      fn();
    }, ms);
    this.live.add(t);
    return () => {
      clearTimeout(t);
      this.live.delete(t);
    };
  }

  every(ms: number, fn: () => void): Cancel {
    const t = setInterval(fn, ms);
    this.live.add(t);
    return () => {
      clearInterval(t);
      this.live.delete(t);
    };
  }

  /** Resolves after `ms`, or never if cancelled by clearAll() (callers must not depend on it then). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.after(ms, resolve));
  }

  clearAll(): void {
    // clearTimeout and clearInterval are interchangeable in Node.
    for (const t of this.live) clearTimeout(t);
    this.live.clear();
  }

  get size(): number {
    return this.live.size;
  }
}
