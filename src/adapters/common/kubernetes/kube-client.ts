import { ClusterError } from '../../../domain/common/port-errors.js';
import { connectKubeHttp, type ConnectOptions } from './kube-connection.js';
import type { KubeHttp } from './kube-http.js';
import {
  loadWatchClient,
  startKubeWatch,
  type WatchClientClass,
  type WatchEventType,
  type WatchHandle,
} from './kube-watch.js';

export type { WatchEventType, WatchHandle } from './kube-watch.js';

export type { ConnectOptions } from './kube-connection.js';
import { MACHINE_OPERATIONS_PATH } from './machine-operation-resource.js';

export interface ListPage {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  readonly continueToken: string | null;
}

/**
 * The few API calls the daemon makes: list, get and status merge-patch of MachineOperations,
 * reading the local Node and merge-patching its metadata, over plain JSON requests, and the
 * watch stream through @kubernetes/client-node 1.4's Watch. The rest of that client (its generated models) is not
 * loaded: its public entry costs ~55 MiB more RSS than `dist/watch.js` alone (~112 vs ~56 MiB for
 * the bare import), which would take the daemon past its 100 MiB target. The deep path is
 * reachable because the package declares no `exports` map, and the dependency is pinned exactly;
 * test/package/npm-pack.test.ts resolves it from an installed tarball. Every failure is a
 * ClusterError with the HTTP status (`null` for a transport failure), translated here and nowhere
 * else.
 */
export class KubeClient {
  private constructor(
    private readonly http: KubeHttp,
    private readonly WatchClient: WatchClientClass,
  ) {}

  /**
   * From a kubeconfig file, or the default chain (KUBECONFIG, in-cluster, ~/.kube/config). The
   * credentials are obtained once here (a missing token file or a failing plugin is an error
   * now, not at the first list), and kept current from then on.
   */
  static async connect(kubeconfigPath: string | null, options: ConnectOptions = {}): Promise<KubeClient> {
    const http = await connectKubeHttp(kubeconfigPath, options);
    return new KubeClient(http, await loadWatchClient());
  }

  get server(): string {
    return this.http.config.server;
  }

  /** The user name the API server authenticates these credentials as (a SelfSubjectReview): for diagnostics. */
  async authenticatedUser(): Promise<string | null> {
    const review = (await this.http.call('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    })) as { status?: { userInfo?: { username?: unknown } } } | null;
    const username = review?.status?.userInfo?.username;
    return typeof username === 'string' ? username : null;
  }

  async list(query: {
    readonly fieldSelector?: string;
    readonly limit: number;
    readonly continueToken?: string;
  }): Promise<ListPage> {
    const page = (await this.http.call('GET', MACHINE_OPERATIONS_PATH, {
      query: {
        limit: String(query.limit),
        ...(query.fieldSelector === undefined ? {} : { fieldSelector: query.fieldSelector }),
        ...(query.continueToken === undefined ? {} : { continue: query.continueToken }),
      },
    })) as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } } | null;
    const items = Array.isArray(page?.items) ? page.items : [];
    const resourceVersion = typeof page?.metadata?.resourceVersion === 'string' ? page.metadata.resourceVersion : '';
    const token = page?.metadata?.continue;
    return { items, resourceVersion, continueToken: typeof token === 'string' && token !== '' ? token : null };
  }

  /** The object, or `null` when it does not exist. */
  async get(name: string): Promise<unknown> {
    try {
      return await this.http.call('GET', `${MACHINE_OPERATIONS_PATH}/${encodeURIComponent(name)}`);
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return null;
      throw error;
    }
  }

  /** A merge-patch of the status subresource. */
  async patchStatus(name: string, body: object): Promise<unknown> {
    return this.http.call('PATCH', `${MACHINE_OPERATIONS_PATH}/${encodeURIComponent(name)}/status`, {
      query: { fieldManager: 'agent-upgrade' },
      body,
      contentType: 'application/merge-patch+json',
    });
  }

  /**
   * A merge-patch of a Node's metadata (the Node authorizer lets a node identity patch its own
   * Node without any RBAC grant; NodeRestriction keeps it off every other Node).
   */
  async patchNode(name: string, body: { readonly metadata: object }): Promise<unknown> {
    return this.http.call('PATCH', `/api/v1/nodes/${encodeURIComponent(name)}`, {
      query: { fieldManager: 'agent-upgrade' },
      body,
      contentType: 'application/merge-patch+json',
    });
  }

  /** The Node's labels, or `null` when there is no such Node. */
  async nodeLabels(name: string): Promise<Readonly<Record<string, string>> | null> {
    try {
      const node = (await this.http.call('GET', `/api/v1/nodes/${encodeURIComponent(name)}`)) as {
        metadata?: { labels?: unknown };
      } | null;
      const labels = node?.metadata?.labels;
      if (typeof labels !== 'object' || labels === null) return {};
      return Object.fromEntries(
        Object.entries(labels).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
      );
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return null;
      throw error;
    }
  }

  /**
   * Watches MachineOperations from `resourceVersion`. `onEvent` runs for every event; the
   * client swallows exceptions thrown there, so callers must not throw from it. `onDone` runs
   * once when the stream ends, with the error that ended it (or null).
   */
  watch(
    query: { readonly resourceVersion: string; readonly fieldSelector?: string; readonly timeoutSeconds: number },
    onEvent: (type: WatchEventType, object: unknown) => void,
    onDone: (error: ClusterError | null) => void,
  ): Promise<WatchHandle> {
    return startKubeWatch(this.http, this.WatchClient, MACHINE_OPERATIONS_PATH, query, onEvent, onDone);
  }
}
