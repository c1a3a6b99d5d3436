import { ClusterError } from '../../../domain/common/port-errors.js';
import type {
  ReleaseObject,
  ReleasePatchOutcome,
  ReleaseQuarantine,
  RolloutObject,
  RolloutPatchOutcome,
  RolloutSpecPatch,
  RolloutStore,
} from '../../../ports/fleet/rollout-store.js';
import { connectKubeHttp, type ConnectOptions } from '../../common/kubernetes/kube-connection.js';
import type { KubeHttp } from '../../common/kubernetes/kube-http.js';
import { objectPath, RELEASES_PATH, ROLLOUTS_PATH } from './resource-paths.js';

/** Objects per page of `rollout list`, and pages at most: a cluster holds a few rollouts, not thousands. */
const LIST_PAGE_SIZE = 250;
const LIST_PAGES_MAX = 40;

type Patched<T> = { readonly kind: 'patched'; readonly object: T } | { readonly kind: 'conflict' | 'not-found' };

/**
 * AgentRollouts and AgentReleases over plain JSON requests (the same kubeconfig chain,
 * credentials, TLS trust and proxy rules as the daemon's client): GETs, and merge-patches of the
 * main resource that carry `metadata.resourceVersion`, which the API server turns into a
 * precondition (409 Conflict when the object changed since it was read). The status subresource
 * is never written.
 */
export class KubernetesRolloutStore implements RolloutStore {
  constructor(private readonly http: KubeHttp) {}

  static async connect(kubeconfigPath: string | null, options: ConnectOptions = {}): Promise<KubernetesRolloutStore> {
    return new KubernetesRolloutStore(await connectKubeHttp(kubeconfigPath, options));
  }

  get(name: string): Promise<RolloutObject | null> {
    return this.read(objectPath(ROLLOUTS_PATH, name), (raw) => toRollout(name, raw));
  }

  async list(): Promise<readonly RolloutObject[]> {
    const rollouts: RolloutObject[] = [];
    let next: string | undefined;
    for (let page = 0; page < LIST_PAGES_MAX; page += 1) {
      const query: Record<string, string> = {
        limit: String(LIST_PAGE_SIZE),
        ...(next === undefined ? {} : { continue: next }),
      };
      const listed = record(await this.calling(() => this.http.call('GET', ROLLOUTS_PATH, { query })));
      const items = Array.isArray(listed['items']) ? listed['items'] : [];
      rollouts.push(...items.map((item) => toRollout('(listed)', item)));
      const token = record(listed['metadata'])['continue'];
      if (typeof token !== 'string' || token === '') break;
      next = token;
    }
    return rollouts.sort((a, b) => a.name.localeCompare(b.name));
  }

  async patchSpec(name: string, resourceVersion: string, patch: RolloutSpecPatch): Promise<RolloutPatchOutcome> {
    const body = { metadata: { resourceVersion }, spec: { ...patch } };
    return asRollout(await this.patch(objectPath(ROLLOUTS_PATH, name), body, (raw) => toRollout(name, raw)));
  }

  async annotate(
    name: string,
    resourceVersion: string,
    annotations: Readonly<Record<string, string>>,
  ): Promise<RolloutPatchOutcome> {
    const body = { metadata: { resourceVersion, annotations } };
    return asRollout(await this.patch(objectPath(ROLLOUTS_PATH, name), body, (raw) => toRollout(name, raw)));
  }

  getRelease(name: string): Promise<ReleaseObject | null> {
    return this.read(objectPath(RELEASES_PATH, name), (raw) => toRelease(name, raw));
  }

  async quarantineRelease(
    name: string,
    resourceVersion: string,
    quarantine: ReleaseQuarantine,
  ): Promise<ReleasePatchOutcome> {
    const body = { metadata: { resourceVersion }, spec: { quarantine: { ...quarantine } } };
    const outcome = await this.patch(objectPath(RELEASES_PATH, name), body, (raw) => toRelease(name, raw));
    return outcome.kind === 'patched' ? { kind: 'patched', release: outcome.object } : outcome;
  }

  close(): void {
    this.http.close();
  }

  private async read<T>(path: string, parse: (raw: unknown) => T): Promise<T | null> {
    try {
      return parse(await this.http.call('GET', path));
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return null;
      throw translated(error);
    }
  }

  private async patch<T>(path: string, body: object, parse: (raw: unknown) => T): Promise<Patched<T>> {
    try {
      const answer = await this.http.call('PATCH', path, {
        query: { fieldManager: 'agent-upgrade' },
        body,
        contentType: 'application/merge-patch+json',
      });
      return { kind: 'patched', object: parse(answer) };
    } catch (error) {
      if (error instanceof ClusterError && error.status === 409) return { kind: 'conflict' };
      if (error instanceof ClusterError && error.status === 404) return { kind: 'not-found' };
      throw translated(error);
    }
  }

  private async calling(request: () => Promise<unknown>): Promise<unknown> {
    try {
      return await request();
    } catch (error) {
      throw translated(error);
    }
  }
}

function asRollout(outcome: Patched<RolloutObject>): RolloutPatchOutcome {
  return outcome.kind === 'patched' ? { kind: 'patched', rollout: outcome.object } : outcome;
}

/** A 401 that survived the credentials being read again is the credentials' fault: no retry fixes it. */
function translated(error: unknown): unknown {
  if (error instanceof ClusterError && error.status === 401) {
    return new ClusterError(401, error.message, 'unauthorized');
  }
  return error;
}

function metadataOf(
  kind: string,
  name: string,
  raw: unknown,
): { metadata: Record<string, unknown>; resourceVersion: string } {
  const metadata = record(record(raw)['metadata']);
  const resourceVersion = metadata['resourceVersion'];
  if (typeof resourceVersion !== 'string' || resourceVersion === '') {
    throw new ClusterError(null, `the API server answered for ${kind} ${name} without a resourceVersion`);
  }
  return { metadata, resourceVersion };
}

function toRollout(name: string, raw: unknown): RolloutObject {
  const { metadata, resourceVersion } = metadataOf('agentrollout', name, raw);
  const object = record(raw);
  const generation = metadata['generation'];
  const created = metadata['creationTimestamp'];
  return {
    name: typeof metadata['name'] === 'string' ? metadata['name'] : name,
    resourceVersion,
    generation: Number.isSafeInteger(generation) ? (generation as number) : null,
    annotations: Object.fromEntries(
      Object.entries(record(metadata['annotations'])).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    ),
    createdAt: typeof created === 'string' ? created : null,
    spec: record(object['spec']),
    status: object['status'] ?? null,
  };
}

function toRelease(name: string, raw: unknown): ReleaseObject {
  const { metadata, resourceVersion } = metadataOf('agentrelease', name, raw);
  return {
    name: typeof metadata['name'] === 'string' ? metadata['name'] : name,
    resourceVersion,
    spec: record(record(raw)['spec']),
  };
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
