import type { ClusterError } from '../../domain/port-errors.js';
import { targetsMachine } from '../../domain/machine-selector.js';
import type { Clock } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { AgentUpgradeRequest } from '../../ports/operation-store.js';
import { EventQueue } from './event-queue.js';
import type { KubeClient, WatchEventType } from './kube-client.js';
import { AGENT_UPGRADE, readMachineOperation, type MachineOperationView } from './machine-operation.js';
import { NodeLabels } from './node-labels.js';

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
  const stream: Stream = {
    client,
    settings,
    clock,
    logger,
    signal,
    yielded: new Set<string>(),
    labels: new NodeLabels(client, settings.machineName, settings.nodeLabelsTtlMs, clock, logger),
    useFieldSelector: true,
    resourceVersion: null,
    failures: 0,
    connected: false,
  };
  while (!signal.aborted) {
    const from = stream.resourceVersion ?? (yield* relist(stream));
    if (from === null) continue;
    if ((yield* watchOnce(stream, from)) === 'aborted') return;
  }
}

/** What the stream's steps share: its inputs, and the cursor they move between list and watches. */
interface Stream {
  readonly client: KubeClient;
  readonly settings: StreamSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  /** The uids yielded by this process: each operation at most once. */
  readonly yielded: Set<string>;
  readonly labels: NodeLabels;
  /** Cleared for good when the server cannot select on spec.machineRef. */
  useFieldSelector: boolean;
  /** Where the next watch starts; `null` = relist first. */
  resourceVersion: string | null;
  /** Failures in a row, for the backoff; reset by anything that works. */
  failures: number;
  /** "Connected to the cluster." was logged: once, after the first list that worked. */
  connected: boolean;
}

/**
 * Lists every operation (paged), yields the actionable ones and returns the resourceVersion to
 * watch from; `null` when the list failed (after backing off), and the caller tries again.
 */
async function* relist(stream: Stream): AsyncGenerator<AgentUpgradeRequest, string | null> {
  const { client, settings, logger } = stream;
  try {
    const listed = await listAll(client, fieldSelector(stream), settings.listPageSize);
    // Said only after a list succeeded: a loaded kubeconfig proves nothing about the server, the credentials or RBAC.
    if (!stream.connected)
      logger.info(
        { server: client.server, machine: settings.machineName, operations: listed.items.length },
        'Connected to the cluster.',
      );
    stream.connected = true;
    yield* actionableOf(listed.items, settings.machineName, stream.labels, stream.yielded);
    stream.resourceVersion = listed.resourceVersion;
    stream.failures = 0;
    return listed.resourceVersion;
  } catch (error) {
    const status = (error as ClusterError).status;
    if (status === 400 && stream.useFieldSelector) {
      // The server has no selectable field spec.machineRef: filter on this side instead.
      stream.useFieldSelector = false;
      logger.info({}, 'MachineOperation field selectors are not supported by the server; filtering client-side.');
      return null;
    }
    await backOff(stream, `list failed (${(error as Error).message})`);
    return null;
  }
}

/**
 * One watch from resourceVersion `from`, until it ends, errs, goes silent or `signal`
 * aborts: yields the actionable operations it delivers and moves the resourceVersion along
 * (back to `null` when it expired, so the next round relists).
 */
async function* watchOnce(stream: Stream, from: string): AsyncGenerator<AgentUpgradeRequest, 'ended' | 'aborted'> {
  const { settings, logger } = stream;
  const queue = new EventQueue<StreamItem>();
  const handle = await startWatch(stream, from, queue);
  if (handle === null) return 'ended';
  try {
    for (;;) {
      const item = await queue.take(settings.idleTimeoutMs, stream.signal);
      if (item === 'aborted') return 'aborted';
      if (item === 'idle') {
        logger.warn(
          { idleMs: settings.idleTimeoutMs },
          'MachineOperation watch went silent; re-watching from the last resourceVersion.',
        );
        return 'ended';
      }
      if (item.kind === 'done') {
        if (item.error?.status === 410) stream.resourceVersion = null;
        else if (item.error !== null) await backOff(stream, `the watch ended (${item.error.message})`);
        return 'ended';
      }
      stream.failures = 0;
      if (item.type === 'ERROR') {
        // An expired resourceVersion arrives as an ERROR event carrying Status 410: relist.
        const code = (item.object as { code?: unknown } | null)?.code;
        if (code === 410) stream.resourceVersion = null;
        else await backOff(stream, `the watch reported an error (${String(code)})`);
        return 'ended';
      }
      const version = (item.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
      if (typeof version === 'string' && version !== '') stream.resourceVersion = version;
      if (item.type === 'ADDED' || item.type === 'MODIFIED') {
        const request = await actionable(item.object, settings.machineName, stream.labels, stream.yielded);
        if (request !== null) yield request;
      }
    }
  } finally {
    handle.abort();
  }
}

/** Starts a watch from `from` that feeds `queue`; `null` when it could not start (after backing off). */
async function startWatch(
  stream: Stream,
  from: string,
  queue: EventQueue<StreamItem>,
): Promise<{ abort(): void } | null> {
  const selector = fieldSelector(stream);
  try {
    return await stream.client.watch(
      {
        resourceVersion: from,
        timeoutSeconds: stream.settings.watchTimeoutSeconds,
        ...(selector === undefined ? {} : { fieldSelector: selector }),
      },
      (type, object) => queue.push({ kind: 'event', type, object }),
      (error) => queue.push({ kind: 'done', error }),
    );
  } catch (error) {
    await backOff(stream, `watch failed to start (${(error as Error).message})`);
    return null;
  }
}

function fieldSelector(stream: Stream): string | undefined {
  return stream.useFieldSelector ? `spec.machineRef=${stream.settings.machineName}` : undefined;
}

async function backOff(stream: Stream, why: string): Promise<void> {
  const { settings } = stream;
  stream.failures += 1;
  const delayMs = Math.min(settings.retryDelayMaxMs, settings.retryDelayMs * 2 ** Math.min(stream.failures - 1, 16));
  stream.logger.warn(
    { delayMs, attempt: stream.failures },
    `MachineOperation watch: ${why}; retrying in ${delayMs} ms.`,
  );
  await stream.clock.sleep(delayMs, stream.signal).catch(() => undefined);
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
