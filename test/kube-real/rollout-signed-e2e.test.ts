/**
 * Signed releases in a fleet rollout on a real kube-apiserver: three real daemons and a real
 * controller, all trusting a go-tuf repository. The controller checks each AgentRelease against
 * the signed metadata before dispatch; an archive swapped on the release host after signing passes
 * that check (the metadata is sound) but not the canary's download, and the rollout halts there
 * at once, before any agent runs the swapped bytes. Read from the objects, never from log text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childOperations, createObject, RELEASES, rolloutNamed, ROLLOUTS } from '../support/kube/rollout-evidence.js';
import type { MachineSpec } from '../support/kube/rollout-fleet.js';
import { startRolloutWorld, type RolloutWorld } from '../support/kube/rollout-world.js';
import { waitFor } from '../support/wait-for.js';

// Every daemon here checks the signed arch against its own (amd64): the fleet is amd64 only.
const MACHINES: MachineSpec[] = ['a', 'b', 'c'].map((zone, i) => ({ name: `signed-${i}`, arch: 'amd64', zone }));
const SELECTOR = { matchLabels: { 'node-role.kubernetes.io/agent': '' } };

let world: RolloutWorld;

beforeAll(async () => {
  world = await startRolloutWorld(MACHINES, [{ name: 'agent-v1', version: '1.0.0' }], {
    signed: true,
    replicas: ['a'],
  });
}, 300_000);

afterAll(async () => {
  await world?.stop();
}, 90_000);

function rollout(name: string, release: string): object {
  const waves = [
    { name: 'canary', count: 1, maxInFlight: 1, failureBudget: 1 },
    { name: 'rest', percent: 100, maxInFlight: 2, failureBudget: 2 },
  ];
  return {
    apiVersion: 'agent-upgrade.dev/v1alpha1',
    kind: 'AgentRollout',
    metadata: { name },
    spec: {
      releaseRef: { name: release },
      targets: { selector: SELECTOR },
      state: 'Run',
      strategy: { waves, operationTimeout: '5m', onFailure: 'Halt' },
    },
  };
}

interface Condition {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
}

async function conditionsOf(path: string): Promise<readonly Condition[]> {
  const answer = await world.cluster.admin('GET', path);
  return (answer.json as { status?: { conditions?: Condition[] } }).status?.conditions ?? [];
}

const reasonOf = async (path: string, type: string): Promise<string | undefined> =>
  (await conditionsOf(path)).find((condition) => condition.type === type)?.reason;

describe('a rollout of signed releases (real API server, real daemons, go-tuf repository)', () => {
  it('an AgentRelease the publisher did not sign is Validated=False/Untrusted and never dispatched', async () => {
    const unsigned = {
      apiVersion: 'agent-upgrade.dev/v1alpha1',
      kind: 'AgentRelease',
      metadata: { name: 'agent-unsigned' },
      spec: {
        version: '9.0.0',
        artifacts: [
          { arch: 'amd64', downloadURL: 'https://releases.invalid/agent-9.0.0.tar.gz', sha256: 'a'.repeat(64) },
        ],
      },
    };
    await createObject(world.cluster, RELEASES, unsigned);
    await createObject(world.cluster, ROLLOUTS, rollout('fleet-unsigned', 'agent-unsigned'));
    const untrusted = async () => (await reasonOf(`${RELEASES}/agent-unsigned`, 'Validated')) === 'Untrusted';
    expect(await waitFor(untrusted, 60_000, 250), world.replicas[0]?.logTail()).toBe(true);
    const refused = async () => (await reasonOf(`${ROLLOUTS}/fleet-unsigned`, 'ReleaseReady')) === 'ReleaseUntrusted';
    expect(await waitFor(refused, 60_000, 250)).toBe(true);
    expect(await childOperations(world.cluster, 'fleet-unsigned')).toEqual([]);
  }, 150_000);

  it('an archive swapped on the release host halts the rollout in the canary wave; no agent ran it', async () => {
    await world.publish({ name: 'agent-v2', version: '2.0.0' });
    world.releases.swap('agent-v2', 'amd64');
    const verified = async () => (await reasonOf(`${RELEASES}/agent-v2`, 'Validated')) === 'Valid';
    expect(await waitFor(verified, 60_000, 250), world.replicas[0]?.logTail()).toBe(true);
    await createObject(world.cluster, ROLLOUTS, rollout('fleet-v2', 'agent-v2'));
    const halted = async () => (await rolloutNamed(world.cluster, 'fleet-v2')).status?.halt !== undefined;
    const halt = await waitFor(halted, 120_000, 500);
    const { status } = await rolloutNamed(world.cluster, 'fleet-v2');
    const operations = await childOperations(world.cluster, 'fleet-v2');
    expect(halt, JSON.stringify({ status, operations })).toBe(true);
    // Halted at the first Untrusted failure, although the canary's budget allowed one failure.
    expect(status?.halt).toMatchObject({ reason: 'Untrusted', wave: 'canary' });
    expect(operations.map((op) => [op.wave, op.phase, op.reason])).toEqual([['canary', 'Failed', 'Untrusted']]);
    for (const machine of MACHINES) expect(await world.fleet.runningDigest(machine.name)).toBe(world.digests['1.0.0']);
  }, 240_000);
});
