import type { ClusterError } from '../../domain/port-errors.js';
import { targetsMachine } from '../../domain/machine-selector.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { AgentUpgradeRequest } from '../../ports/operation-store.js';
import { EventQueue } from './event-queue.js';
import type { KubeClient, WatchEventType } from './kube-client.js';
import { AGENT_UPGRADE, readMachineOperation, type MachineOperationView } from './machine-operation.js';

export interface StreamSettings {
  readonly machineName: string;
  readonly watchTimeoutSeconds: number;
  /** A watch that delivers nothing (not even a bookmark) this long is presumed dead. */
  readonly idleTimeoutMs: number;
  readonly retryDelayMs: number;
  readonly retryDelayMaxMs: number;
  readonly listPageSize: number;
  readonly nodeLabelsTtlMs: number;
}

type StreamItem =
  | { readonly kind: 'event'; readonly type: WatchEventType; readonly object: unknown }
  | { readonly kind: 'done'; readonly error: ClusterError | null };

/**
 * List, then watch from the list's resourceVersion, for as long as `signal` lets it: every
 * AgentUpgrade operation for this machine that is still Pending is yielded once per process.
 * Survives dropped streams (re-watch from the last resourceVersion), silent streams (watchdog),
 * 410 Gone (relist) and API errors (bounded backoff). Operations of other kinds or machines, and
 * operations already InProgress or terminal, are never yielded: they are someone else's or
 * belong to the upgrade record. With the server-side field selector on spec.machineRef (used
 * whenever the server supports it), operations that use machineSelector are not delivered.
 */
export async function* operationStream(
  client: KubeClient,
  settings: StreamSettings,
  clock: Clock,
  logger: Logger,
  signal: AbortSignal,
): AsyncGenerator<AgentUpgradeRequest> {
  const yielded = new Set<string>();
  const labels = new NodeLabels(client, settings, clock, logger);
  let useFieldSelector = true;
  let resourceVersion: string | null = null;
  let failures = 0;
  let connected = false;
  const backOff = async (why: string): Promise<void> => {
    failures += 1;
    const delayMs = Math.min(settings.retryDelayMaxMs, settings.retryDelayMs * 2 ** Math.min(failures - 1, 16));
    logger.warn({ delayMs, attempt: failures }, `MachineOperation watch: ${why}; retrying in ${delayMs} ms.`);
    await clock.sleep(delayMs, signal).catch(() => undefined);
  };
  const fieldSelector = (): string | undefined =>
    useFieldSelector ? `spec.machineRef=${settings.machineName}` : undefined;

  while (!signal.aborted) {
    if (resourceVersion === null) {
      try {
        const listed = await listAll(client, fieldSelector(), settings.listPageSize);
        // Said only after a list succeeded: a loaded kubeconfig proves nothing about the server, the credentials or RBAC.
        if (!connected)
          logger.info(
            { server: client.server, machine: settings.machineName, operations: listed.items.length },
            'Connected to the cluster.',
          );
        connected = true;
        yield* actionableOf(listed.items, settings.machineName, labels, yielded);
        resourceVersion = listed.resourceVersion;
        failures = 0;
      } catch (error) {
        const status = (error as ClusterError).status;
        if (status === 400 && useFieldSelector) {
          // The server has no selectable field spec.machineRef: filter on this side instead.
          useFieldSelector = false;
          logger.info({}, 'MachineOperation field selectors are not supported by the server; filtering client-side.');
          continue;
        }
        await backOff(`list failed (${(error as Error).message})`);
        continue;
      }
    }
    const queue = new EventQueue<StreamItem>();
    let handle: { abort(): void } | null = null;
    try {
      handle = await client.watch(
        {
          resourceVersion,
          timeoutSeconds: settings.watchTimeoutSeconds,
          ...(fieldSelector() === undefined ? {} : { fieldSelector: fieldSelector() as string }),
        },
        (type, object) => queue.push({ kind: 'event', type, object }),
        (error) => queue.push({ kind: 'done', error }),
      );
    } catch (error) {
      await backOff(`watch failed to start (${(error as Error).message})`);
      continue;
    }
    try {
      for (;;) {
        const item = await queue.take(settings.idleTimeoutMs, signal);
        if (item === 'aborted') return;
        if (item === 'idle') {
          logger.warn(
            { idleMs: settings.idleTimeoutMs },
            'MachineOperation watch went silent; re-watching from the last resourceVersion.',
          );
          break;
        }
        if (item.kind === 'done') {
          if (item.error?.status === 410) resourceVersion = null;
          else if (item.error !== null) await backOff(`the watch ended (${item.error.message})`);
          break;
        }
        failures = 0;
        if (item.type === 'ERROR') {
          // An expired resourceVersion arrives as an ERROR event carrying Status 410: relist.
          const code = (item.object as { code?: unknown } | null)?.code;
          if (code === 410) resourceVersion = null;
          else await backOff(`the watch reported an error (${String(code)})`);
          break;
        }
        const version = (item.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
        if (typeof version === 'string' && version !== '') resourceVersion = version;
        if (item.type === 'ADDED' || item.type === 'MODIFIED') {
          const request = await actionable(item.object, settings.machineName, labels, yielded);
          if (request !== null) yield request;
        }
      }
    } finally {
      handle.abort();
    }
  }
}

async function* actionableOf(
  items: readonly unknown[],
  machineName: string,
  labels: NodeLabels,
  yielded: Set<string>,
): AsyncGenerator<AgentUpgradeRequest> {
  for (const item of items) {
    const request = await actionable(item, machineName, labels, yielded);
    if (request !== null) yield request;
  }
}

async function listAll(
  client: KubeClient,
  fieldSelector: string | undefined,
  limit: number,
): Promise<{ items: unknown[]; resourceVersion: string }> {
  const items: unknown[] = [];
  let continueToken: string | undefined;
  let resourceVersion = '';
  for (let page = 0; page < 10_000; page += 1) {
    const listed = await client.list({
      limit,
      ...(fieldSelector === undefined ? {} : { fieldSelector }),
      ...(continueToken === undefined ? {} : { continueToken }),
    });
    items.push(...listed.items);
    resourceVersion = listed.resourceVersion;
    if (listed.continueToken === null) break;
    continueToken = listed.continueToken;
  }
  return { items, resourceVersion };
}

async function actionable(
  object: unknown,
  machineName: string,
  labels: NodeLabels,
  yielded: Set<string>,
): Promise<AgentUpgradeRequest | null> {
  const operation = readMachineOperation(object);
  if (operation === null || operation.operationKind !== AGENT_UPGRADE || yielded.has(operation.uid)) return null;
  if (operation.phase !== null && operation.phase !== 'Pending') return null;
  if (!targetsMachine(operation.target, machineName, operation.target.kind === 'selector' ? await labels.get() : null))
    return null;
  yielded.add(operation.uid);
  return requestOf(operation);
}

function requestOf(operation: MachineOperationView): AgentUpgradeRequest {
  return {
    operation: { name: operation.name, uid: operation.uid },
    phase: operation.phase,
    parameters: operation.parameters,
  };
}

/** The local Node's labels for machineSelector operations, read at most once per TTL. */
class NodeLabels {
  private cached: { readonly labels: Readonly<Record<string, string>> | null; readonly atMs: number } | null = null;

  constructor(
    private readonly client: KubeClient,
    private readonly settings: StreamSettings,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async get(): Promise<Readonly<Record<string, string>> | null> {
    const nowMs = this.clock.nowMs();
    if (this.cached !== null && nowMs - this.cached.atMs < this.settings.nodeLabelsTtlMs) return this.cached.labels;
    let labels: Readonly<Record<string, string>> | null = null;
    try {
      labels = await this.client.nodeLabels(this.settings.machineName);
    } catch (error) {
      this.logger.warn(
        {},
        `The Node ${this.settings.machineName} cannot be read (${(error as Error).message}); machineSelector operations are not matched.`,
      );
    }
    this.cached = { labels, atMs: nowMs };
    return labels;
  }
}
