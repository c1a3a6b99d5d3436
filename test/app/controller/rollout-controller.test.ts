/**
 * RolloutController: two replicas over one API server and one Lease on virtual time. Only the
 * leader reconciles; when it stops, the standby takes over and carries on; refused credentials
 * end the controller with the ClusterError.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_EPOCH_MS } from '../../../src/adapters/common/memory/memory-clock.js';
import { RolloutController } from '../../../src/app/fleet/controller/rollout-controller.js';
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import { SteppedClock } from '../../support/stepped-clock.js';
import { populatedServer, quietLogger, quietMetrics, rolloutObject, ROLLOUT, runSpec } from './controller-fixtures.js';
import { SETTINGS } from './election-candidate.js';
import type { FakeApiServer } from './fake-api-server.js';
import { healthy, MemoryLeaseStore, type ViewFault } from './memory-lease-store.js';

const stops: AbortController[] = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop.abort();
});

interface Replica {
  readonly controller: RolloutController;
  readonly stop: AbortController;
  readonly leaseFault: ViewFault;
  ended: { error: unknown } | null;
}

function replica(identity: string, server: FakeApiServer, leases: MemoryLeaseStore, clock: SteppedClock): Replica {
  const leaseFault = healthy();
  const controller = new RolloutController({
    cluster: server.client(identity),
    leases: leases.view(leaseFault),
    clock,
    logger: quietLogger(),
    metrics: quietMetrics,
    settings: {
      leader: { ...SETTINGS, identity },
      loop: { resyncMs: 300_000, retryDelayMs: 1_000, retryDelayMaxMs: 60_000, settleMs: 0 },
    },
  });
  const stop = new AbortController();
  stops.push(stop);
  const started: Replica = { controller, stop, leaseFault, ended: null };
  void controller.run(stop.signal).then(
    () => (started.ended = { error: null }),
    (error: unknown) => (started.ended = { error }),
  );
  return started;
}

function cluster() {
  const clock = new SteppedClock();
  return { clock, server: populatedServer(clock), leases: new MemoryLeaseStore(clock) };
}

/** Time passes with a check at every step. */
async function pass(clock: SteppedClock, ms: number, check: () => void): Promise<void> {
  const untilMs = clock.nowMs() + ms;
  void clock.sleep(ms);
  await clock.runUntil(() => {
    check();
    return clock.nowMs() >= untilMs;
  }, 2_000);
}

function converged(server: FakeApiServer, name = ROLLOUT): boolean {
  const status = server.get('rollouts', name)?.status as AgentRolloutStatus | undefined;
  return status !== undefined && (status.waves ?? []).every((wave) => wave.pendingCreates.length === 0);
}

const writers = (server: FakeApiServer): string[] => [...new Set(server.writes.map((write) => write.by))];

describe('RolloutController', () => {
  it('only the leader reconciles; the other replica stays passive', async () => {
    const { clock, server, leases } = cluster();
    const a = replica('a', server, leases, clock);
    await pass(clock, 1, () => undefined);
    const b = replica('b', server, leases, clock);
    const oneLoop = (): void => expect(a.controller.loop !== null && b.controller.loop !== null).toBe(false);
    await clock.runUntil(() => {
      oneLoop();
      return converged(server) && a.controller.loop?.idle === true;
    }, 500);
    await pass(clock, 60_000, () => {
      oneLoop();
      expect(b.controller.loop).toBeNull();
    });
    expect(server.list('operations')).toHaveLength(3);
    expect(writers(server)).toEqual(['a']);
    expect([a.controller.ready, b.controller.ready]).toEqual([true, true]);
    expect(leases.current?.lease.holder).toBe('a');
  });

  it('after the leader’s signal aborts it hands the Lease back; the standby takes over and carries on', async () => {
    const { clock, server, leases } = cluster();
    const a = replica('a', server, leases, clock);
    await pass(clock, 1, () => undefined);
    const b = replica('b', server, leases, clock);
    await clock.runUntil(() => converged(server) && a.controller.loop?.idle === true, 500);
    a.stop.abort();
    await clock.runUntil(() => a.ended !== null, 50);
    expect(a.ended).toEqual({ error: null });
    const stoppedMs = clock.nowMs();
    await clock.runUntil(() => b.controller.loop?.idle === true, 500);
    // Handed back, not expired: the standby leads within a retry period.
    expect(clock.nowMs() - stoppedMs).toBeLessThanOrEqual(SETTINGS.retryPeriodMs);
    expect(leases.current?.lease).toMatchObject({ holder: 'b', transitions: 1 });
    const writesBefore = server.writes.length;
    server.put('rollouts', rolloutObject('second', runSpec({ state: 'Preview' })));
    await clock.runUntil(() => server.get('rollouts', 'second')?.status !== undefined, 500);
    const later = server.writes.slice(writesBefore);
    expect(later.map((write) => [write.by, write.kind, write.name])).toContainEqual(['b', 'rolloutStatus', 'second']);
    expect(later.filter((write) => write.by === 'a')).toEqual([]);
    expect(server.list('operations')).toHaveLength(3);
  });

  it('a leader cut off from the Lease stops acting before the standby starts, and the standby carries on', async () => {
    const { clock, server, leases } = cluster();
    const a = replica('a', server, leases, clock);
    await pass(clock, 1, () => undefined);
    const b = replica('b', server, leases, clock);
    await clock.runUntil(() => converged(server), 500);
    a.leaseFault.error = new ClusterError(503, 'Service Unavailable');
    await clock.runUntil(() => {
      expect(a.controller.loop !== null && b.controller.loop !== null).toBe(false);
      return b.controller.loop?.idle === true;
    }, 2_000);
    expect(leases.current?.lease.holder).toBe('b');
    server.put('rollouts', rolloutObject('second', runSpec({ state: 'Preview' })));
    await clock.runUntil(() => server.get('rollouts', 'second')?.status !== undefined, 500);
    expect(server.writes.filter((write) => write.name === 'second').map((write) => write.by)).toContain('b');
    expect(clock.nowMs() - DEFAULT_EPOCH_MS).toBeLessThan(120_000);
  });

  it('credentials refused by the Lease and the informers alike end run with the ClusterError', async () => {
    const { clock, server, leases } = cluster();
    const a = replica('a', server, leases, clock);
    await clock.runUntil(() => converged(server), 500);
    // Lease calls are slow, so the renewal in flight fails after the informers already have.
    a.leaseFault.requestLatencyMs = 1_500;
    await pass(clock, 10_000, () => undefined);
    const revoked = new ClusterError(401, 'x', 'unauthorized');
    a.leaseFault.error = revoked;
    server.failInformers(revoked);
    await clock.runUntil(() => a.ended !== null, 500);
    expect(a.ended?.error).toMatchObject({ name: 'ClusterError', code: 'unauthorized' });
    expect(a.controller.loop).toBeNull();
  });
});
