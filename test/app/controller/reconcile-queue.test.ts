/**
 * ReconcileQueue: one pending run per key, one more run for a key changed while it was being
 * reconciled, the earliest delayed add per key on the Clock, the settle window and what cuts it
 * short, and close().
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_EPOCH_MS } from '../../../src/adapters/common/memory/memory-clock.js';
import { ReconcileQueue } from '../../../src/app/fleet/controller/reconcile-queue.js';
import { SteppedClock } from '../../support/stepped-clock.js';

type Key = 'a' | 'b';

/** A worker that takes keys until stopped and keeps what it ran, with the virtual time of each run. */
function startWorker(queue: ReconcileQueue<Key>, clock: SteppedClock) {
  const runs: { key: Key; atMs: number }[] = [];
  const stop = new AbortController();
  const finished = (async () => {
    for (;;) {
      const key = await queue.take(stop.signal);
      if (key === null) return;
      runs.push({ key, atMs: clock.nowMs() - DEFAULT_EPOCH_MS });
      queue.done(key);
    }
  })();
  return { runs, stop, finished };
}

/** Lets virtual time pass: a sleeper of our own keeps the clock moving up to `ms`. */
async function letTimePass(clock: SteppedClock, ms: number): Promise<void> {
  const untilMs = clock.nowMs() + ms;
  const sleeping = clock.sleep(ms);
  await clock.runUntil(() => clock.nowMs() >= untilMs, 100);
  await sleeping;
}

let clock: SteppedClock;
let queue: ReconcileQueue<Key>;
afterEach(() => queue.close());

function fresh(): void {
  clock = new SteppedClock();
  queue = new ReconcileQueue<Key>(clock);
}

describe('add and take', () => {
  it('a key added again while it is queued runs once', async () => {
    fresh();
    queue.add('a');
    queue.add('b');
    queue.add('a');
    const worker = startWorker(queue, clock);
    await clock.runUntil(() => queue.idle, 50);
    await letTimePass(clock, 10_000);
    expect(worker.runs.map((run) => run.key)).toEqual(['a', 'b']);
  });

  it('a key added while it is being reconciled runs once more after done, not before', async () => {
    fresh();
    queue.add('a');
    const signal = new AbortController().signal;
    expect(await queue.take(signal)).toBe('a');
    queue.add('a');
    queue.add('a');
    expect(queue.idle).toBe(false);
    // Until done, another take sees nothing: the same key is never reconciled twice at once.
    const early = new AbortController();
    const during = queue.take(early.signal);
    await clock.runUntil(() => true, 5);
    early.abort();
    expect(await during).toBeNull();
    queue.done('a');
    expect(await queue.take(signal)).toBe('a');
    queue.done('a');
    expect(queue.idle).toBe(true);
  });

  it('a waiting take wakes for a key added later', async () => {
    fresh();
    const worker = startWorker(queue, clock);
    await clock.runUntil(() => true, 5);
    queue.add('b');
    await clock.runUntil(() => worker.runs.length === 1, 50);
    expect(worker.runs).toEqual([{ key: 'b', atMs: 0 }]);
  });

  it('take returns null at once when its signal aborted', async () => {
    fresh();
    queue.add('a');
    const aborted = new AbortController();
    aborted.abort();
    expect(await queue.take(aborted.signal)).toBeNull();
  });
});

describe('addAfter', () => {
  it('keeps the earliest timer per key and adds the key when it fires on the clock', async () => {
    fresh();
    const worker = startWorker(queue, clock);
    queue.addAfter('a', 5_000);
    queue.addAfter('a', 1_000);
    queue.addAfter('a', 3_000);
    queue.addAfter('b', 2_000);
    await letTimePass(clock, 20_000);
    expect(worker.runs).toEqual([
      { key: 'a', atMs: 1_000 },
      { key: 'b', atMs: 2_000 },
    ]);
  });

  it('a timer that fired no longer counts: a later delay sets a new one', async () => {
    fresh();
    const worker = startWorker(queue, clock);
    queue.addAfter('a', 1_000);
    await letTimePass(clock, 2_000);
    queue.addAfter('a', 3_000);
    await letTimePass(clock, 10_000);
    expect(worker.runs).toEqual([
      { key: 'a', atMs: 1_000 },
      { key: 'a', atMs: 5_000 },
    ]);
  });

  it('a timer firing while its key is being reconciled makes it run once more', async () => {
    fresh();
    queue.add('a');
    const signal = new AbortController().signal;
    expect(await queue.take(signal)).toBe('a');
    queue.addAfter('a', 1_000);
    await letTimePass(clock, 2_000);
    queue.done('a');
    expect(await queue.take(signal)).toBe('a');
  });
});

describe('the settle window', () => {
  function settling(): ReturnType<typeof startWorker> {
    clock = new SteppedClock();
    queue = new ReconcileQueue<Key>(clock, 250);
    return startWorker(queue, clock);
  }

  it('a change waits out the window, and the changes arriving meanwhile join it', async () => {
    const worker = settling();
    queue.add('a');
    await letTimePass(clock, 100);
    queue.add('a');
    await letTimePass(clock, 1_000);
    expect(worker.runs).toEqual([{ key: 'a', atMs: 250 }]);
  });

  it('addNow queues at once and cancels the wait begun, so the key runs once', async () => {
    const worker = settling();
    queue.add('a');
    queue.add('b');
    await letTimePass(clock, 100);
    queue.addNow('a');
    await letTimePass(clock, 1_000);
    expect(worker.runs).toEqual([
      { key: 'a', atMs: 100 },
      { key: 'b', atMs: 250 },
    ]);
  });

  it('close() cancels the waits begun', async () => {
    settling();
    queue.add('a');
    await clock.runUntil(() => clock.sleepers === 1, 20);
    queue.close();
    expect(clock.sleepers).toBe(0);
  });
});

describe('close and idle', () => {
  it('close() makes a waiting and every later take return null, and cancels the timers', async () => {
    fresh();
    const worker = startWorker(queue, clock);
    queue.addAfter('a', 1_000);
    queue.addAfter('b', 2_000);
    await clock.runUntil(() => clock.sleepers === 2, 20);
    queue.close();
    await worker.finished;
    expect(clock.sleepers).toBe(0);
    queue.add('a');
    expect(await queue.take(new AbortController().signal)).toBeNull();
    await letTimePass(clock, 5_000);
    expect(worker.runs).toEqual([]);
  });

  it('idle: nothing queued and nothing being reconciled; a pending timer does not count', async () => {
    fresh();
    expect(queue.idle).toBe(true);
    queue.addAfter('a', 1_000);
    expect(queue.idle).toBe(true);
    queue.add('b');
    expect(queue.idle).toBe(false);
    const signal = new AbortController().signal;
    expect(await queue.take(signal)).toBe('b');
    expect(queue.idle).toBe(false);
    queue.done('b');
    expect(queue.idle).toBe(true);
  });
});
