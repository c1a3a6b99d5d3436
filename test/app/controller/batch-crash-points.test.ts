/**
 * Crash points inside a batch of creates. A batch's creates are sent together, so a process that
 * dies during one leaves any subset of them on the API server — not only a prefix. For every
 * batch of a plan and every subset of it (plus every batch boundary), the first controller dies
 * with exactly that subset landed; a restarted controller (a new Reconciler over a fresh list)
 * must make exactly the announced creates that are missing, never have more operations in flight
 * than the wave's maxInFlight, and finish the wave.
 */
import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../../src/adapters/common/memory/memory-clock.js';
import { ClusterCache } from '../../../src/app/fleet/controller/cluster-cache.js';
import { CREATE_BATCH_MAX, reconcileSteps } from '../../../src/app/fleet/controller/reconcile-steps.js';
import { rolloutSnapshot } from '../../../src/app/fleet/controller/rollout-snapshot.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { Reconciler } from '../../../src/app/fleet/controller/reconciler.js';
import { isLivePhase } from '../../../src/domain/fleet/order/snapshot.js';
import type { AgentRolloutStatus } from '../../../src/domain/fleet/status/rollout-status.js';
import { ANNOTATION_AGENT_VERSION } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import type { ControllerCluster } from '../../../src/ports/fleet/controller-cluster.js';
import { NEW_VERSION } from '../../domain/rollout/fixtures.js';
import { populatedServer, quietLogger, quietMetrics, ROLLOUT, runSpec } from './controller-fixtures.js';
import type { FakeApiServer } from './fake-api-server.js';

const MACHINES = 12;
const MAX_IN_FLIGHT = 7;
/** The first plan announces 7 creates: batches of 1, 2 and 4. */
const BATCHES = [
  [1, 1],
  [2, 3],
  [4, 7],
] as const;

class ProcessKilled extends Error {}

/** One wave over every machine, `MAX_IN_FLIGHT` at a time: two steps of creates. */
const spec = (): Record<string, unknown> =>
  runSpec({
    strategy: {
      waves: [{ name: 'all', percent: 100, maxInFlight: MAX_IN_FLIGHT }],
      operationTimeout: '10m',
      onFailure: 'Halt',
      quarantineOnHalt: true,
    },
  });

/**
 * The first controller's cluster: creates numbered 1, 2, … in the order they are sent. Those of
 * the batch `[first, last]` land only when `landed` has them; whatever is sent after that batch
 * (a later create, an Event) finds the process dead.
 */
function dyingClient(inner: ControllerCluster, batch: readonly [number, number], landed: ReadonlySet<number>) {
  let creates = 0;
  let dying = false;
  return {
    ...inner,
    createOperation: async (operation) => {
      creates += 1;
      if (creates > batch[1]) throw new ProcessKilled();
      if (creates >= batch[0]) {
        dying = true;
        if (!landed.has(creates)) throw new ProcessKilled();
      }
      return inner.createOperation(operation);
    },
    recordEvent: async (event, atMs) => {
      if (dying) throw new ProcessKilled();
      return inner.recordEvent(event, atMs);
    },
  } satisfies ControllerCluster;
}

function reconcilerOver(server: FakeApiServer, cluster: ControllerCluster, clock: MemoryClock) {
  const cache = new ClusterCache();
  server.listInto(cache);
  return { cache, reconciler: new Reconciler({ cluster, cache, clock, logger: quietLogger(), metrics: quietMetrics }) };
}

const live = (server: FakeApiServer): number =>
  server.list('operations').filter((operation) => isLivePhase(operation.phase)).length;

/** Every operation in flight finishes as its daemon would: Complete, and the Node reports the version. */
function daemonsFinish(server: FakeApiServer, clock: MemoryClock): void {
  for (const operation of server.list('operations')) {
    if (!isLivePhase(operation.phase)) continue;
    server.put('operations', {
      ...operation,
      phase: 'Complete',
      reason: 'Succeeded',
      message: 'AgentUpgrade completed',
      startedMs: clock.nowMs(),
      completedMs: clock.nowMs(),
    });
    const node = server.get('nodes', operation.machineRef);
    if (node !== undefined)
      server.put('nodes', { ...node, annotations: { ...node.annotations, [ANNOTATION_AGENT_VERSION]: NEW_VERSION } });
  }
}

/** Every subset of the batch's creates that leaves at least one out (the whole batch is a boundary). */
function crashPoints(): { batch: readonly [number, number]; landed: Set<number> }[] {
  const points: { batch: readonly [number, number]; landed: Set<number> }[] = [];
  for (const batch of BATCHES) {
    const size = batch[1] - batch[0] + 1;
    for (let mask = 0; mask < 2 ** size; mask += 1) {
      const landed = new Set<number>();
      for (let bit = 0; bit < size; bit += 1) if ((mask & (1 << bit)) !== 0) landed.add(batch[0] + bit);
      points.push({ batch, landed });
    }
  }
  return points;
}

async function crashAndRestart(batch: readonly [number, number], landed: ReadonlySet<number>) {
  const clock = new MemoryClock();
  const server = populatedServer(clock, MACHINES, spec());
  const first = reconcilerOver(server, dyingClient(server.client('controller-0'), batch, landed), clock);
  // With the whole last batch landed the process dies at an Event, which is best-effort: the
  // reconcile may end normally. Every other point ends it with the kill.
  const ended = await first.reconciler.reconcile(`rollout/${ROLLOUT}`).catch((error: unknown) => error);
  if (batch[0] !== 4 || landed.size !== 4) expect(ended).toBeInstanceOf(ProcessKilled);
  const announced = (server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus).waves.flatMap(
    (wave) => wave.pendingCreates,
  );
  const before = new Set(server.list('operations').map((operation) => operation.name));
  expect([...before].sort()).toEqual(
    announced.filter((_, index) => batch[0] > index + 1 || landed.has(index + 1)).sort(),
  );

  const restarted = reconcilerOver(server, server.client('controller-1'), clock);
  let maxLive = 0;
  for (let round = 0; round < 20; round += 1) {
    clock.advance(1_000);
    server.listInto(restarted.cache);
    await restarted.reconciler.reconcile(`rollout/${ROLLOUT}`);
    maxLive = Math.max(maxLive, live(server));
    if (round === 0)
      expect(
        server
          .list('operations')
          .map((operation) => operation.name)
          .sort(),
        'the announced creates, no other',
      ).toEqual([...announced].sort());
    daemonsFinish(server, clock);
    if ((server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus | undefined)?.phase === 'Succeeded') break;
  }
  return { server, maxLive };
}

describe('a crash between the creates of a batch', () => {
  it('the first plan is the status update, then batches of 1, 2 and 4', () => {
    const clock = new MemoryClock();
    const cache = new ClusterCache();
    populatedServer(clock, MACHINES, spec()).listInto(cache);
    const snapshot = rolloutSnapshot(cache, ROLLOUT);
    if (snapshot === null) throw new Error('the fixture has no rollout');
    const steps = reconcileSteps(planRollout(snapshot, clock.nowMs()).actions, CREATE_BATCH_MAX);
    expect(steps[0]?.kind).toBe('UpdateRolloutStatus');
    const sizes = steps.flatMap((step) => (step.kind === 'CreateBatch' ? [step.operations.length] : []));
    expect(sizes).toEqual(BATCHES.map(([from, to]) => to - from + 1));
  });

  it.each(
    crashPoints().map(
      (point) => [`batch ${point.batch.join('–')}, landed {${[...point.landed].join(',')}}`, point] as const,
    ),
  )(
    '%s: the restarted controller makes the missing creates, stays within maxInFlight and finishes the wave',
    async (_label, point) => {
      const { server, maxLive } = await crashAndRestart(point.batch, point.landed);
      expect(maxLive).toBeLessThanOrEqual(MAX_IN_FLIGHT);
      expect((server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus).phase).toBe('Succeeded');
      const machines = server.list('operations').map((operation) => operation.machineRef);
      expect(new Set(machines).size).toBe(MACHINES);
      expect(machines).toHaveLength(MACHINES);
    },
  );
});
