import { ClusterError } from '../../../domain/common/port-errors.js';
import { ROLLOUT_GROUP, ROLLOUT_VERSION } from '../../../domain/fleet/spec/rollout-vocabulary.js';
import type {
  RolloutObject,
  RolloutPatchOutcome,
  RolloutSpecPatch,
  RolloutStore,
} from '../../../ports/fleet/rollout-store.js';
import { connectKubeHttp, type ConnectOptions } from '../../common/kubernetes/kube-connection.js';
import type { KubeHttp } from '../../common/kubernetes/kube-http.js';

export const AGENT_ROLLOUTS_PATH = `/apis/${ROLLOUT_GROUP}/${ROLLOUT_VERSION}/agentrollouts`;

/**
 * AgentRollouts over plain JSON requests (the same kubeconfig chain, credentials, TLS trust and
 * proxy rules as the daemon's client): a GET of the object, and a merge-patch of the main
 * resource that carries `metadata.resourceVersion`, which the API server turns into a
 * precondition (409 Conflict when the object changed since it was read). The status subresource
 * is never written.
 */
export class KubernetesRolloutStore implements RolloutStore {
  constructor(private readonly http: KubeHttp) {}

  static async connect(kubeconfigPath: string | null, options: ConnectOptions = {}): Promise<KubernetesRolloutStore> {
    return new KubernetesRolloutStore(await connectKubeHttp(kubeconfigPath, options));
  }

  async get(name: string): Promise<RolloutObject | null> {
    try {
      return toRollout(name, await this.http.call('GET', pathOf(name)));
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return null;
      throw translated(error);
    }
  }

  async patchSpec(name: string, resourceVersion: string, patch: RolloutSpecPatch): Promise<RolloutPatchOutcome> {
    try {
      const body = { metadata: { resourceVersion }, spec: { ...patch } };
      const answer = await this.http.call('PATCH', pathOf(name), {
        query: { fieldManager: 'agent-upgrade' },
        body,
        contentType: 'application/merge-patch+json',
      });
      return { kind: 'patched', rollout: toRollout(name, answer) };
    } catch (error) {
      if (error instanceof ClusterError && error.status === 409) return { kind: 'conflict' };
      if (error instanceof ClusterError && error.status === 404) return { kind: 'not-found' };
      throw translated(error);
    }
  }

  close(): void {
    this.http.close();
  }
}

/** `spec.cluster` of KUBERNETES_EXEC_INFO for a plugin that asks for it (as KubeClient sends it). */
function pathOf(name: string): string {
  return `${AGENT_ROLLOUTS_PATH}/${encodeURIComponent(name)}`;
}

/** A 401 that survived the credentials being read again is the credentials' fault: no retry fixes it. */
function translated(error: unknown): unknown {
  if (error instanceof ClusterError && error.status === 401) {
    return new ClusterError(401, error.message, 'unauthorized');
  }
  return error;
}

function toRollout(name: string, raw: unknown): RolloutObject {
  const object = isRecord(raw) ? raw : {};
  const metadata = isRecord(object['metadata']) ? object['metadata'] : {};
  const resourceVersion = metadata['resourceVersion'];
  if (typeof resourceVersion !== 'string' || resourceVersion === '') {
    throw new ClusterError(null, `the API server answered for agentrollout ${name} without a resourceVersion`);
  }
  const generation = metadata['generation'];
  return {
    name: typeof metadata['name'] === 'string' ? metadata['name'] : name,
    resourceVersion,
    generation: Number.isSafeInteger(generation) ? (generation as number) : null,
    spec: isRecord(object['spec']) ? object['spec'] : {},
    status: object['status'] ?? null,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
