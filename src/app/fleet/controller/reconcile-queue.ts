import type { Clock } from '../../../ports/common/clock.js';
import { ReadyList } from '../../common/ready-list.js';

/**
 * Reconciles due, by key, each queued at most once: a key added again while it waits is the same
 * work, and a key added while it is being reconciled runs once more afterwards, so no change is
 * missed and none is planned twice at once. `addAfter` keeps one timer per key, the earliest,
 * on the Clock, so a simulation drives the queue on virtual time.
 */
export class ReconcileQueue<K extends string> {
  private readonly ready = new ReadyList<K>();
  private readonly queued = new Set<K>();
  private readonly active = new Set<K>();
  private readonly again = new Set<K>();
  private readonly timers = new Map<K, { readonly atMs: number; readonly cancel: AbortController }>();
  /** Keys waiting out `settleMs` before they are queued, each with what cancels its wait. */
  private readonly settling = new Map<K, AbortController>();
  private closed = false;

  /**
   * `settleMs`: a key becomes ready this long after the change that made it due, and the changes
   * arriving meanwhile join it. A burst (a thousand operations finishing together, each with its
   * Node's version report) is then planned once, whole, instead of once per arriving event.
   */
  constructor(
    private readonly clock: Clock,
    private readonly settleMs = 0,
  ) {}

  add(key: K): void {
    if (this.closed) return;
    if (this.settleMs === 0 || this.queued.has(key) || this.active.has(key)) return this.enqueue(key);
    if (this.settling.has(key)) return;
    const cancel = new AbortController();
    this.settling.set(key, cancel);
    this.clock.sleep(this.settleMs, cancel.signal).then(
      () => {
        this.settling.delete(key);
        this.enqueue(key);
      },
      () => undefined,
    );
  }

  /**
   * Queues `key` without waiting out the settle window (a wait already begun is cut short): for
   * work whose inputs are known to be complete, as when the caches caught up with the reconcile's
   * own creates and nothing else is awaited.
   */
  addNow(key: K): void {
    const settling = this.settling.get(key);
    this.settling.delete(key);
    settling?.abort();
    this.enqueue(key);
  }

  private enqueue(key: K): void {
    if (this.closed) return;
    if (this.active.has(key)) {
      this.again.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.ready.push(key);
  }

  /** Adds `key` after `delayMs`, unless a timer for it fires sooner already. */
  addAfter(key: K, delayMs: number): void {
    if (this.closed) return;
    const atMs = this.clock.monotonicMs() + Math.max(0, delayMs);
    const existing = this.timers.get(key);
    if (existing !== undefined && existing.atMs <= atMs) return;
    existing?.cancel.abort();
    const cancel = new AbortController();
    this.timers.set(key, { atMs, cancel });
    this.clock.sleep(Math.max(0, delayMs), cancel.signal).then(
      () => {
        if (this.timers.get(key)?.cancel === cancel) this.timers.delete(key);
        this.add(key);
      },
      () => undefined,
    );
  }

  /** The next key to reconcile; `null` once closed or aborted. Call `done` with it afterwards. */
  async take(signal: AbortSignal): Promise<K | null> {
    for (;;) {
      if (this.closed || signal.aborted) return null;
      const key = this.ready.shift();
      if (key !== undefined) {
        this.queued.delete(key);
        this.active.add(key);
        return key;
      }
      await this.ready.changed(signal);
    }
  }

  done(key: K): void {
    this.active.delete(key);
    if (this.again.delete(key)) this.add(key);
  }

  /** Nothing is queued and nothing is being reconciled (timers may still be set). */
  get idle(): boolean {
    return this.ready.length === 0 && this.active.size === 0;
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers.values()) timer.cancel.abort();
    this.timers.clear();
    for (const cancel of this.settling.values()) cancel.abort();
    this.settling.clear();
    this.ready.notify();
  }
}
