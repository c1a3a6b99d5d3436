/**
 * The fake API server of the pacing benchmark, in a process of its own (fake-process.mjs), as a
 * real API server is never in the controller's process: N Nodes and the release, then what the
 * benchmark asks over IPC — the rollout, a 429 for the next create, closing.
 */
import { OPERATIONS_PATH } from '../../src/adapters/fleet/kubernetes/resource-paths.js';
import { fleetOf, NEW_RELEASE, NEW_VERSION, releaseManifest } from '../../test/sim/fleet/fleet-scenarios.js';
import { startFakeApiServer, type CustomObjectInput } from '../../test/support/kube/fake-apiserver.js';

export type HostRequest =
  | { readonly type: 'rollout'; readonly spec: Record<string, unknown> }
  | { readonly type: 'fail-next-create'; readonly status: number; readonly retryAfterSeconds: number | null }
  | { readonly type: 'close' };

export async function hostFake(
  size: number,
  seed: number,
  writeLatencyMs: number,
  send: (message: object) => void,
): Promise<(request: HostRequest) => Promise<void>> {
  const fake = await startFakeApiServer({
    recordRequestBodies: false,
    historyLimit: Math.max(20_000, size * 4),
    namespaces: ['agent-upgrade-system'],
    bookmarkIntervalMs: 60_000,
  });
  for (const machine of fleetOf(size, seed))
    fake.setNode(machine.name, { ...machine.labels }, { 'agent-upgrade.dev/agent-version': machine.version });
  fake.releases.create(releaseManifest(NEW_RELEASE, NEW_VERSION) as CustomObjectInput);
  for (const method of ['POST', 'PUT', 'PATCH']) if (writeLatencyMs > 0) fake.delay({ method }, writeLatencyMs);
  send({ type: 'ready', origin: fake.origin });
  return async (request) => {
    if (request.type === 'rollout')
      fake.rollouts.create({ metadata: { name: 'wave' }, spec: request.spec } as CustomObjectInput);
    else if (request.type === 'fail-next-create') {
      const { status, retryAfterSeconds } = request;
      const failure = retryAfterSeconds === null ? { status } : { status, retryAfterSeconds };
      fake.failNext({ method: 'POST', path: new RegExp(`^${OPERATIONS_PATH}$`) }, failure);
    } else await fake.close();
  };
}
