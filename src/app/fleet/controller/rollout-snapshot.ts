import type { ChildOperation, ForeignOperation, RolloutSnapshot } from '../../../domain/fleet/order/snapshot.js';
import { LABEL_ROLLOUT } from '../../../domain/fleet/spec/rollout-vocabulary.js';
import type { ClusterCache } from './cluster-cache.js';

/**
 * What the planner is given for one rollout, read from the caches alone: the rollout, the
 * releases it names, every Node (the planner applies the selector), its children (labelled with
 * its name; the planner tells a namesake's by owner uid) and every other AgentUpgrade operation.
 * `signedReleasesOnly`: the controller verifies releases, so only a release whose status says so
 * is dispatched. The kubelets' Leases go in as the cache holds them, for the Node gate. `null` when
 * the rollout is not in the cache.
 */
export function rolloutSnapshot(cache: ClusterCache, name: string, signedReleasesOnly = false): RolloutSnapshot | null {
  const rollout = cache.get('rollouts', name);
  if (rollout === undefined) return null;
  const children: ChildOperation[] = [];
  const foreignOperations: ForeignOperation[] = [];
  for (const operation of cache.all('operations')) {
    if (operation.labels[LABEL_ROLLOUT] === name) children.push(operation);
    else foreignOperations.push({ name: operation.name, machineRef: operation.machineRef, phase: operation.phase });
  }
  return {
    rollout,
    release: releaseNamed(cache, rollout.spec, ['releaseRef', 'name']),
    rollbackRelease: releaseNamed(cache, rollout.spec, ['rollback', 'releaseRef', 'name']),
    nodes: [...cache.all('nodes')],
    children,
    foreignOperations,
    ...(signedReleasesOnly && { signedReleasesOnly }),
    leases: cache.byName('leases'),
  };
}

/** The release at `path` of an untrusted spec, when the cache has it (the planner judges a malformed spec). */
function releaseNamed(cache: ClusterCache, spec: unknown, path: readonly string[]): RolloutSnapshot['release'] {
  let value: unknown = spec;
  for (const key of path)
    value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' ? (cache.get('releases', value) ?? null) : null;
}
