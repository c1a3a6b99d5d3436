import type { KubeConfig } from '@kubernetes/client-node';
import type { Watch } from '@kubernetes/client-node/dist/watch.js';
import { ClusterError } from '../../../domain/common/port-errors.js';
import { redactUrlsInText } from '../../../domain/common/redacted-url.js';
import type { KubeHttp } from './kube-http.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchHandle {
  abort(): void;
}

export type WatchClientClass = typeof Watch;

export interface WatchQuery {
  readonly resourceVersion: string;
  readonly timeoutSeconds: number;
  readonly fieldSelector?: string;
  readonly labelSelector?: string;
}

/** Only `dist/watch.js` of @kubernetes/client-node is loaded (see KubeClient for why). */
export async function loadWatchClient(): Promise<WatchClientClass> {
  const { Watch } = await import('@kubernetes/client-node/dist/watch.js');
  return Watch;
}

/**
 * Watches the collection at `path` from `resourceVersion`, with bookmarks, over a connection of
 * its own that carries the credentials of now. `onEvent` runs for every event (the client
 * swallows exceptions thrown there, so it must not throw); `onDone` runs once when the stream
 * ends, with the ClusterError that ended it or `null`.
 */
export async function startKubeWatch(
  http: KubeHttp,
  WatchClient: WatchClientClass,
  path: string,
  query: WatchQuery,
  onEvent: (type: WatchEventType, object: unknown) => void,
  onDone: (error: ClusterError | null) => void,
): Promise<WatchHandle> {
  const params: Record<string, string | number | boolean> = {
    resourceVersion: query.resourceVersion,
    allowWatchBookmarks: true,
    timeoutSeconds: query.timeoutSeconds,
  };
  if (query.fieldSelector !== undefined) params['fieldSelector'] = query.fieldSelector;
  if (query.labelSelector !== undefined) params['labelSelector'] = query.labelSelector;
  const { credentials, config } = http;
  const state = await translated(() => credentials.current());
  const agent = http.watchAgent(state);
  const watcher = new WatchClient({
    // Watch reads only these two members of its KubeConfig: the server, and the fetch options.
    getCurrentCluster: () => ({ name: 'cluster', server: config.server, skipTLSVerify: !config.rejectUnauthorized }),
    applyToFetchOptions: async (options: object) => ({ ...options, headers: { ...state.headers }, agent }),
  } as unknown as KubeConfig);
  let finished = false;
  const done = (error: unknown): void => {
    if (finished) return;
    finished = true;
    agent.destroy();
    const failure = error === null || error === undefined || isAbort(error) ? null : asClusterError(error);
    // Read the credentials again now, so the next watch does not send what was just refused.
    if (failure?.status === 401) credentials.rejected(state).catch(() => false);
    onDone(failure);
  };
  let controller: AbortController;
  try {
    controller = await watcher.watch(
      path,
      params,
      (type: string, object: unknown) => onEvent(type as WatchEventType, object),
      done,
    );
  } catch (error) {
    agent.destroy();
    throw asClusterError(error);
  }
  return {
    abort: () => {
      controller.abort();
      agent.destroy();
    },
  };
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
