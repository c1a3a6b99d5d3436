import type { KubeConfig } from '@kubernetes/client-node';
import type { Watch } from '@kubernetes/client-node/dist/watch.js';
import { ClusterError } from '../../domain/port-errors.js';
import { redactUrlsInText } from '../../domain/redacted-url.js';
import { KubeHttp } from './kube-http.js';
import { loadClusterAccess } from './kubeconfig.js';
import { MACHINE_OPERATIONS_PATH } from './machine-operation.js';

export interface ListPage {
  readonly items: readonly unknown[];
  readonly resourceVersion: string;
  readonly continueToken: string | null;
}

export interface WatchHandle {
  abort(): void;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * The few API calls the daemon makes: list, get and status merge-patch of MachineOperations and
 * reading the local Node over plain JSON requests, and the watch stream through
 * @kubernetes/client-node 1.4's Watch. The rest of that client (its generated models) is not
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
    private readonly watcher: Watch,
  ) {}

  /** From a kubeconfig file, or the default chain (KUBECONFIG, in-cluster, ~/.kube/config). */
  static async connect(kubeconfigPath: string | null): Promise<KubeClient> {
    const access = await loadClusterAccess(kubeconfigPath);
    const http = new KubeHttp(access);
    const { Watch } = await import('@kubernetes/client-node/dist/watch.js');
    // Watch reads only these two members of its KubeConfig: the server, and the fetch options
    // (credentials and TLS agent) for the streaming request.
    const config = {
      getCurrentCluster: () => ({
        name: 'cluster',
        server: access.server,
        skipTLSVerify: !access.tls.rejectUnauthorized,
      }),
      applyToFetchOptions: async (options: object) => ({
        ...options,
        headers: { ...access.headers },
        agent: http.agent,
      }),
    };
    return new KubeClient(http, new Watch(config as unknown as KubeConfig));
  }

  get server(): string {
    return this.http.access.server;
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
  async watch(
    query: { readonly resourceVersion: string; readonly fieldSelector?: string; readonly timeoutSeconds: number },
    onEvent: (type: WatchEventType, object: unknown) => void,
    onDone: (error: ClusterError | null) => void,
  ): Promise<WatchHandle> {
    const params: Record<string, string | number | boolean> = {
      resourceVersion: query.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: query.timeoutSeconds,
    };
    if (query.fieldSelector !== undefined) params['fieldSelector'] = query.fieldSelector;
    let finished = false;
    const done = (error: unknown): void => {
      if (finished) return;
      finished = true;
      onDone(error === null || error === undefined || isAbort(error) ? null : asClusterError(error));
    };
    const controller = await translated(() =>
      this.watcher.watch(
        MACHINE_OPERATIONS_PATH,
        params,
        (type: string, object: unknown) => onEvent(type as WatchEventType, object),
        done,
      ),
    );
    return { abort: () => controller.abort() };
  }
}

async function translated<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw asClusterError(error);
  }
}

function asClusterError(error: unknown): ClusterError {
  if (error instanceof ClusterError) return error;
  const status = statusOf(error);
  return new ClusterError(
    status,
    status === null
      ? `the API server cannot be reached: ${describe(error)}`
      : `the watch request was answered ${status}`,
  );
}

/** The watch client reports a non-200 answer as an Error with `statusCode`. */
function statusOf(error: unknown): number | null {
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  return typeof statusCode === 'number' ? statusCode : null;
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return redactUrlsInText(text.split('\n')[0]?.slice(0, 300) ?? '');
}

function isAbort(error: unknown): boolean {
  return (error as { name?: unknown }).name === 'AbortError';
}
