import type { ApiException, CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { ClusterError } from '../../domain/port-errors.js';
import { redactUrlsInText } from '../../domain/redacted-url.js';
import { MACHINE_OPERATION_GROUP, MACHINE_OPERATION_PLURAL, MACHINE_OPERATION_VERSION, MACHINE_OPERATIONS_PATH } from './machine-operation.js';

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
 * The few API calls the daemon makes, over @kubernetes/client-node 1.4 (imported lazily: it costs
 * about a second of start-up that no other command should pay). Every failure is a ClusterError
 * with the HTTP status (`null` for a transport failure), translated here and nowhere else.
 */
export class KubeClient {
  private constructor(
    private readonly config: KubeConfig,
    private readonly objects: CustomObjectsApi,
    private readonly core: CoreV1Api,
    private readonly watcher: Watch,
    private readonly mergePatch: Parameters<CustomObjectsApi['patchClusterCustomObjectStatus']>[1],
  ) {}

  /** From a kubeconfig file, or the default chain (KUBECONFIG, in-cluster, ~/.kube/config). */
  static async connect(kubeconfigPath: string | null): Promise<KubeClient> {
    const client = await import('@kubernetes/client-node');
    const config = new client.KubeConfig();
    try {
      if (kubeconfigPath === null) config.loadFromDefault();
      else config.loadFromFile(kubeconfigPath);
    } catch (error) {
      throw new ClusterError(null, `the kubeconfig cannot be loaded: ${describe(error)}`);
    }
    if (config.getCurrentCluster() === null) throw new ClusterError(null, 'the kubeconfig names no current cluster');
    return new KubeClient(
      config,
      config.makeApiClient(client.CustomObjectsApi),
      config.makeApiClient(client.CoreV1Api),
      new client.Watch(config),
      client.setHeaderOptions('Content-Type', client.PatchStrategy.MergePatch),
    );
  }

  get server(): string {
    return this.config.getCurrentCluster()?.server ?? '';
  }

  async list(query: { readonly fieldSelector?: string; readonly limit: number; readonly continueToken?: string }): Promise<ListPage> {
    const page = (await translated(() =>
      this.objects.listClusterCustomObject({
        group: MACHINE_OPERATION_GROUP,
        version: MACHINE_OPERATION_VERSION,
        plural: MACHINE_OPERATION_PLURAL,
        limit: query.limit,
        ...(query.fieldSelector === undefined ? {} : { fieldSelector: query.fieldSelector }),
        ...(query.continueToken === undefined ? {} : { _continue: query.continueToken }),
      }),
    )) as { items?: unknown; metadata?: { resourceVersion?: unknown; continue?: unknown } };
    const items = Array.isArray(page.items) ? page.items : [];
    const resourceVersion = typeof page.metadata?.resourceVersion === 'string' ? page.metadata.resourceVersion : '';
    const token = page.metadata?.continue;
    return { items, resourceVersion, continueToken: typeof token === 'string' && token !== '' ? token : null };
  }

  /** The object, or `null` when it does not exist. */
  async get(name: string): Promise<unknown> {
    try {
      return await translated(() =>
        this.objects.getClusterCustomObject({ group: MACHINE_OPERATION_GROUP, version: MACHINE_OPERATION_VERSION, plural: MACHINE_OPERATION_PLURAL, name }),
      );
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return null;
      throw error;
    }
  }

  /** A merge-patch of the status subresource. */
  async patchStatus(name: string, body: object): Promise<unknown> {
    return translated(() =>
      this.objects.patchClusterCustomObjectStatus(
        { group: MACHINE_OPERATION_GROUP, version: MACHINE_OPERATION_VERSION, plural: MACHINE_OPERATION_PLURAL, name, body, fieldManager: 'agent-upgrade' },
        this.mergePatch,
      ),
    );
  }

  /** The Node's labels, or `null` when there is no such Node. */
  async nodeLabels(name: string): Promise<Readonly<Record<string, string>> | null> {
    try {
      const node = await translated(() => this.core.readNode({ name }));
      return node.metadata?.labels ?? {};
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
      this.watcher.watch(MACHINE_OPERATIONS_PATH, params, (type: string, object: unknown) => onEvent(type as WatchEventType, object), done),
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
  return new ClusterError(status, status === null ? `the API server cannot be reached: ${describe(error)}` : `the API server answered ${status}${reasonOf(error)}`);
}

function statusOf(error: unknown): number | null {
  const candidate = error as Partial<ApiException<unknown>> & { statusCode?: unknown };
  if (typeof candidate.code === 'number' && candidate.code >= 100) return candidate.code;
  if (typeof candidate.statusCode === 'number') return candidate.statusCode;
  return null;
}

/** The Status reason from an ApiException body (a raw JSON string in client-node 1.4). */
function reasonOf(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  try {
    const parsed = typeof body === 'string' ? (JSON.parse(body) as { reason?: unknown }) : (body as { reason?: unknown } | undefined);
    return typeof parsed?.reason === 'string' ? ` (${parsed.reason})` : '';
  } catch {
    return '';
  }
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return redactUrlsInText(text.split('\n')[0]?.slice(0, 300) ?? '');
}

function isAbort(error: unknown): boolean {
  return (error as { name?: unknown }).name === 'AbortError';
}
