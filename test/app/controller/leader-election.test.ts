/**
 * LeaderElection over a Lease double with resourceVersion semantics, on virtual time: who holds
 * the Lease, when a standby takes over, when a cut-off leader gives up, and that two replicas
 * never both believe they lead.
 */
import { describe, expect, it } from 'vitest';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { SteppedClock } from '../../support/stepped-clock.js';
import { Prng } from '../../sim/harness/index.js';
import { Candidate, elapsed, lastWriteBy, SETTINGS, skewedClock } from './election-candidate.js';
import { healthy, MemoryLeaseStore } from './memory-lease-store.js';

const HOUR = 3_600_000;

function world() {
  const clock = new SteppedClock();
  return { clock, store: new MemoryLeaseStore(clock) };
}

/** Moves virtual time on by `ms` (a sleeper of the test's own keeps it moving). */
async function pass(clock: SteppedClock, ms: number, check: () => void = () => undefined): Promise<void> {
  const untilMs = clock.nowMs() + ms;
  void clock.sleep(ms);
  await clock.runUntil(() => {
    check();
    return clock.nowMs() >= untilMs;
  }, 10_000);
}

describe('acquiring', () => {
  it('a candidate acquires an empty Lease at once', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock);
    expect(await a.election.acquire(new AbortController().signal)).toBe(true);
    expect(elapsed(clock)).toBe(0);
    expect(store.current?.lease).toMatchObject({ holder: 'a', transitions: 0, leaseDurationSeconds: 15 });
  });

  it.each([
    ['the same', 0],
    ['an hour ahead', HOUR],
    ['an hour behind', -HOUR],
  ])(
    'a standby with a clock %s takes over only after a whole lease duration without an observed change',
    async (_label, offsetMs) => {
      const { clock, store } = world();
      const a = new Candidate('a', store, clock).campaign();
      await pass(clock, 1);
      const b = new Candidate('b', store, clock, SETTINGS, skewedClock(clock, offsetMs)).campaign();
      await pass(clock, 60_000);
      expect({ holder: store.current?.lease.holder, bTerms: b.terms }).toEqual({ holder: 'a', bTerms: [] });
      await a.stop(); // a crash: the Lease is not handed back
      const lastRenewMs = lastWriteBy(store, 'a');
      await clock.runUntil(() => b.leading, 1_000);
      const takeoverMs = elapsed(clock);
      expect(takeoverMs - lastRenewMs).toBeGreaterThanOrEqual(SETTINGS.leaseDurationMs);
      // It noticed the last renewal within a retry period, and looks again every retry period.
      expect(takeoverMs - lastRenewMs).toBeLessThanOrEqual(SETTINGS.leaseDurationMs + 2 * SETTINGS.retryPeriodMs);
      expect(store.current?.lease).toMatchObject({ holder: 'b', transitions: 1 });
      await b.stop();
    },
  );

  it('an unauthorized ClusterError propagates out of acquire', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock);
    a.fault.error = new ClusterError(401, 'x', 'unauthorized');
    await expect(a.election.acquire(new AbortController().signal)).rejects.toMatchObject({
      name: 'ClusterError',
      code: 'unauthorized',
    });
    expect(store.current).toBeNull();
  });

  it('a retryable ClusterError does not: the candidate acquires once the Lease answers again', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock);
    a.fault.error = new ClusterError(503, 'unavailable');
    const acquired = a.election.acquire(new AbortController().signal);
    await pass(clock, 10_000);
    a.fault.error = null;
    let result: boolean | null = null;
    void acquired.then((value) => (result = value));
    await clock.runUntil(() => result !== null, 100);
    expect(result).toBe(true);
    expect(store.current?.lease.holder).toBe('a');
  });

  it('acquire returns false once its signal aborts', async () => {
    const { clock, store } = world();
    await new Candidate('a', store, clock).election.acquire(new AbortController().signal);
    const stop = new AbortController();
    const b = new Candidate('b', store, clock).election.acquire(stop.signal);
    await pass(clock, 5_000);
    stop.abort();
    expect(await b).toBe(false);
  });
});

describe('holding', () => {
  it.each([
    { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
    { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 4_000 },
    { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 9_000 },
  ])(
    'a leader whose renewals fail gives up between the renew deadline and the lease duration (%o)',
    async (settings) => {
      const { clock, store } = world();
      const a = new Candidate('a', store, clock, settings).campaign();
      await pass(clock, 30_000);
      a.fault.error = new ClusterError(503, 'Service Unavailable');
      await clock.runUntil(() => !a.leading, 1_000);
      const lostMs = elapsed(clock) - lastWriteBy(store, 'a');
      expect(a.terms[0]?.outcome).toBe('lost');
      expect(lostMs).toBeGreaterThanOrEqual(settings.renewDeadlineMs);
      expect(lostMs).toBeLessThan(settings.leaseDurationMs);
      await a.stop();
    },
  );

  it('a leader whose renewal gets no answer gives up before the lease duration', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock).campaign();
    await pass(clock, 30_000);
    a.fault.requestLatencyMs = HOUR;
    await clock.runUntil(() => !a.leading, 1_000);
    expect(a.terms[0]?.outcome).toBe('lost');
    expect(elapsed(clock) - lastWriteBy(store, 'a')).toBeLessThan(SETTINGS.leaseDurationMs);
    a.fault.requestLatencyMs = 0;
    await a.stop();
  });

  it('a renewal answered late counts from when it was sent, so the leader gives up before a standby starts', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock).campaign();
    await pass(clock, 1_000);
    const b = new Candidate('b', store, clock).campaign();
    await pass(clock, 28_000);
    // The renewal sent at 30 s lands at once, but its answer takes 7.5 s; every later call fails.
    a.fault.writeResponseLatencyMs = 7_500;
    await pass(clock, 1_500);
    a.fault.error = new ClusterError(503, 'Service Unavailable');
    await clock.runUntil(() => b.leading, 1_000);
    expect(a.terms).toMatchObject([{ outcome: 'lost' }]);
    expect(a.terms[0]?.toMs).toBeLessThanOrEqual(b.terms[0]?.fromMs ?? 0);
    expect(a.terms[0]?.toMs).toBeLessThanOrEqual(30_000 + SETTINGS.renewDeadlineMs);
    await Promise.all([a.stop(), b.stop()]);
  });

  it('hold returns stopped when its signal aborts, and keeps renewing until then', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock).campaign();
    await pass(clock, 60_000);
    expect(lastWriteBy(store, 'a')).toBeGreaterThanOrEqual(60_000 - SETTINGS.retryPeriodMs);
    await a.stop();
    expect(a.terms).toEqual([{ fromMs: 0, toMs: 60_000, outcome: 'stopped' }]);
  });

  it('release() clears the holder, so another candidate acquires at once', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock).campaign();
    await pass(clock, 20_000);
    await a.stop();
    await a.election.release();
    expect(store.current?.lease.holder).toBe('');
    const releasedMs = elapsed(clock);
    const c = new Candidate('c', store, clock);
    expect(await c.election.acquire(new AbortController().signal)).toBe(true);
    expect(elapsed(clock)).toBe(releasedMs);
    expect(store.current?.lease).toMatchObject({ holder: 'c', transitions: 1 });
  });

  it('release() by a replica that does not hold the Lease changes nothing', async () => {
    const { clock, store } = world();
    await new Candidate('a', store, clock).election.acquire(new AbortController().signal);
    const before = store.current;
    await new Candidate('b', store, clock).election.release();
    expect(store.current).toBe(before);
  });
});

describe('two candidates over one Lease', () => {
  it('two candidates starting at the same instant: exactly one leads', async () => {
    const { clock, store } = world();
    const a = new Candidate('a', store, clock).campaign();
    const b = new Candidate('b', store, clock).campaign();
    await pass(clock, 60_000, () => expect(a.leading && b.leading).toBe(false));
    expect([a.leading, b.leading].filter(Boolean)).toHaveLength(1);
    await Promise.all([a.stop(), b.stop()]);
  });

  it.each([1, 2, 3, 4, 5, 6])(
    'with faults and slow answers at random (seed %i), they never both believe they lead',
    async (seed) => {
      const { clock, store } = world();
      const prng = new Prng(seed);
      const candidates = [new Candidate('a', store, clock), new Candidate('b', store, clock)];
      for (const candidate of candidates) candidate.campaign();
      const bothLead = (): void => expect(candidates.every((candidate) => candidate.leading)).toBe(false);
      for (let round = 0; round < 40; round += 1) {
        const fault = prng.pick(candidates).fault;
        Object.assign(fault, healthy());
        const kind = prng.pick(['healthy', 'error', 'slow-request', 'slow-response', 'slow-write'] as const);
        if (kind === 'error') fault.error = new ClusterError(503, 'Service Unavailable');
        if (kind === 'slow-request') fault.requestLatencyMs = prng.between(1, 30) * 1_000;
        if (kind === 'slow-response') fault.responseLatencyMs = prng.between(1, 30) * 1_000;
        if (kind === 'slow-write') fault.writeResponseLatencyMs = prng.between(1, 30) * 1_000;
        await pass(clock, prng.between(1, 20) * 1_000, bothLead);
      }
      for (const candidate of candidates) Object.assign(candidate.fault, healthy());
      await pass(clock, 120_000, bothLead);
      // Once the faults are gone, someone leads again.
      expect(candidates.some((candidate) => candidate.leading)).toBe(true);
      await Promise.all(candidates.map((candidate) => candidate.stop()));
    },
  );
});
