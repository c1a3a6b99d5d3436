import type { ClusterError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import { EventQueue } from '../../common/kubernetes/event-queue.js';
import type { KubeHttp } from '../../common/kubernetes/kube-http.js';
import {
  startKubeWatch,
  type WatchClientClass,
  type WatchEventType,
  type WatchHandle,
} from '../../common/kubernetes/kube-watch.js';
import type { UnauthorizedLimit, UnauthorizedStreak } from '../../common/kubernetes/unauthorized-streak.js';
import { nameOf } from './read-objects.js';
import { messageOf } from '../../../domain/common/message-of.js';

export interface InformerSettings {
  readonly pageSize: number;
  /** Each watch asks to be ended after a random time in [min, max) seconds, so replicas do not reconnect in step. */
  readonly watchTimeoutMinSeconds: number;
  readonly watchTimeoutMaxSeconds: number;
  /** A watch that delivers nothing, not even a bookmark, this long is presumed dead. */
  readonly idleTimeoutMs: number;
  readonly retryDelayMs: number;
  readonly retryDelayMaxMs: number;
  readonly unauthorized: UnauthorizedLimit;
  readonly random: () => number;
}

export interface InformerResource<T> {
  /** The plural resource name, for logs. */
  readonly resource: string;
  readonly path: string;
  readonly labelSelector?: string;
  /** The object as the consumer keeps it; `null`: not one it keeps (it is then gone to it). */
  readonly read: (raw: unknown) => T | null;
}

/** What an informer delivers: the whole collection after a (re)list, then each change. */
export type CollectionEvent<T> =
  | { readonly type: 'replace'; readonly objects: readonly T[] }
  | { readonly type: 'upsert'; readonly object: T }
  | { readonly type: 'delete'; readonly name: string };

export interface InformerParts {
  readonly http: KubeHttp;
  readonly WatchClient: WatchClientClass;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly streak: UnauthorizedStreak;
  readonly settings: InformerSettings;
  /** Counts one list page or one watch start, with the status it was answered (null: no answer). */
  readonly count: (verb: 'list' | 'watch', code: number | null) => void;
}

type StreamItem =
  | { readonly kind: 'event'; readonly type: WatchEventType; readonly object: unknown }
  | { readonly kind: 'done'; readonly error: ClusterError | null };

/**
 * One resource's list+watch, for as long as `signal` lets it: a paged list becomes a `replace`
 * event, then the watch from the list's resourceVersion becomes `upsert` and `delete` events.
 * Dropped or timed-out watches resume from the last resourceVersion seen (bookmarks included);
 * 410 Gone relists; other failures back off (jittered, doubling, on the Clock); credentials that
 * keep being refused end it with the ClusterError `unauthorized`.
 */
export async function runInformer<T>(
  parts: InformerParts,
  resource: InformerResource<T>,
  onEvent: (event: CollectionEvent<T>) => void,
  signal: AbortSignal,
): Promise<void> {
  let resourceVersion: string | null = null;
  let failures = 0;
  const backOff = async (why: string, error: unknown): Promise<void> => {
    parts.streak.record(error);
    parts.streak.check(error);
    failures += 1;
    const { retryDelayMs, retryDelayMaxMs, random } = parts.settings;
    const ceilingMs = Math.min(retryDelayMaxMs, retryDelayMs * 2 ** Math.min(failures - 1, 16));
    const delayMs = Math.round(ceilingMs / 2 + (random() * ceilingMs) / 2);
    parts.logger.warn({ resource: resource.resource, delayMs, attempt: failures }, `Informer: ${why}; retrying.`);
    await parts.clock.sleep(delayMs, signal).catch(() => undefined);
  };
  while (!signal.aborted) {
    if (resourceVersion === null) {
      try {
        resourceVersion = await relist(parts, resource, onEvent);
        failures = 0;
        parts.streak.succeeded();
      } catch (error) {
        await backOff(`list failed (${messageOf(error)})`, error);
        continue;
      }
    }
    const ended = await watchFrom(parts, resource, resourceVersion, onEvent, signal);
    if (ended.kind === 'progress') {
      resourceVersion = ended.resourceVersion;
      failures = 0;
    } else if (ended.kind === 'gone') resourceVersion = null;
    else if (ended.kind === 'failed') {
      if (ended.resourceVersion !== null) resourceVersion = ended.resourceVersion;
      if (ended.delivered) failures = 0;
      await backOff(ended.why, ended.error);
    }
  }
}

async function relist<T>(
  parts: InformerParts,
  resource: InformerResource<T>,
  onEvent: (event: CollectionEvent<T>) => void,
): Promise<string> {
  const objects: T[] = [];
  let continueToken: string | undefined;
  let resourceVersion = '';
  for (let page = 0; page < 100_000; page += 1) {
    const query: Record<string, string> = { limit: String(parts.settings.pageSize) };
    if (continueToken !== undefined) query['continue'] = continueToken;
    if (resource.labelSelector !== undefined) query['labelSelector'] = resource.labelSelector;
    const listed = (await counted(parts, 'list', () => parts.http.call('GET', resource.path, { query }))) as {
      items?: unknown;
      metadata?: { resourceVersion?: unknown; continue?: unknown };
    } | null;
    for (const raw of Array.isArray(listed?.items) ? listed.items : []) {
      const object = resource.read(raw);
      if (object !== null) objects.push(object);
    }
    const version = listed?.metadata?.resourceVersion;
    if (typeof version === 'string') resourceVersion = version;
    const next = listed?.metadata?.continue;
    if (typeof next !== 'string' || next === '') break;
    continueToken = next;
  }
  onEvent({ type: 'replace', objects });
  return resourceVersion;
}

type WatchEnd =
  | { readonly kind: 'progress'; readonly resourceVersion: string }
  | { readonly kind: 'gone' }
  | { readonly kind: 'aborted' }
  | {
      readonly kind: 'failed';
      readonly why: string;
      readonly error: unknown;
      readonly resourceVersion: string | null;
      /** The watch delivered events before it failed: it worked, so the backoff starts over. */
      readonly delivered: boolean;
    };

async function watchFrom<T>(
  parts: InformerParts,
  resource: InformerResource<T>,
  from: string,
  onEvent: (event: CollectionEvent<T>) => void,
  signal: AbortSignal,
): Promise<WatchEnd> {
  const queue = new EventQueue<StreamItem>();
  let handle: WatchHandle;
  try {
    handle = await startWatch(parts, resource, from, queue);
  } catch (error) {
    const why = `watch failed to start (${messageOf(error)})`;
    return { kind: 'failed', why, error, resourceVersion: null, delivered: false };
  }
  let resourceVersion = from;
  try {
    for (;;) {
      const item = await queue.take(parts.settings.idleTimeoutMs, signal);
      if (item === 'aborted') return { kind: 'aborted' };
      if (item === 'idle') return { kind: 'progress', resourceVersion };
      if (item.kind === 'done') {
        if (item.error === null) return { kind: 'progress', resourceVersion };
        if (item.error.status === 410) return { kind: 'gone' };
        const why = `the watch ended (${item.error.message})`;
        return { kind: 'failed', why, error: item.error, resourceVersion, delivered: resourceVersion !== from };
      }
      if (item.type === 'ERROR') {
        const code = (item.object as { code?: unknown } | null)?.code;
        if (code === 410) return { kind: 'gone' };
        const why = `the watch reported ${String(code)}`;
        return { kind: 'failed', why, error: null, resourceVersion, delivered: resourceVersion !== from };
      }
      const version = (item.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
      if (typeof version === 'string' && version !== '') resourceVersion = version;
      deliver(resource, item.type, item.object, onEvent);
    }
  } finally {
    handle.abort();
  }
}

function deliver<T>(
  resource: InformerResource<T>,
  type: WatchEventType,
  raw: unknown,
  onEvent: (event: CollectionEvent<T>) => void,
): void {
  if (type === 'BOOKMARK') return;
  const name = nameOf(raw);
  if (name === null) return;
  const object = type === 'DELETED' ? null : resource.read(raw);
  // An object that stops being readable (or stops being the kind of object this informer keeps) is gone to it.
  if (object === null) onEvent({ type: 'delete', name });
  else onEvent({ type: 'upsert', object });
}

async function startWatch<T>(
  parts: InformerParts,
  resource: InformerResource<T>,
  from: string,
  queue: EventQueue<StreamItem>,
): Promise<WatchHandle> {
  const { watchTimeoutMinSeconds: min, watchTimeoutMaxSeconds: max, random } = parts.settings;
  const timeoutSeconds = max <= min ? min : Math.min(max - 1, Math.floor(min + random() * (max - min)));
  // The watch client reports a refused start (an error status, no connection) through `onDone`
  // before it returns, not by throwing: that is the answer the start is counted with.
  const start: { returned: boolean; refused: ClusterError | null } = { returned: false, refused: null };
  return counted(
    parts,
    'watch',
    async () => {
      const started = await startKubeWatch(
        parts.http,
        parts.WatchClient,
        resource.path,
        {
          resourceVersion: from,
          timeoutSeconds,
          ...(resource.labelSelector === undefined ? {} : { labelSelector: resource.labelSelector }),
        },
        (type, object) => queue.push({ kind: 'event', type, object }),
        (error) => {
          if (!start.returned) start.refused = error;
          queue.push({ kind: 'done', error });
        },
      );
      start.returned = true;
      return started;
    },
    () => (start.refused === null ? 200 : start.refused.status),
  );
}

async function counted<T>(
  parts: InformerParts,
  verb: 'list' | 'watch',
  call: () => Promise<T>,
  answered: () => number | null = () => 200,
): Promise<T> {
  try {
    const result = await call();
    parts.count(verb, answered());
    return result;
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    parts.count(verb, typeof status === 'number' ? status : null);
    throw error;
  }
}
