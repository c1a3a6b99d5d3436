import type { ClusterError } from '../../../domain/common/port-errors.js';
import type { AgentUpgradeRequest } from '../../../ports/node/operation-store.js';
import { EventQueue } from '../../common/kubernetes/event-queue.js';
import type { WatchEventType, WatchHandle } from '../../common/kubernetes/kube-client.js';
import {
  abandonFieldSelector,
  actionable,
  backOff,
  fieldSelector,
  watchTimeoutSeconds,
  type Cursor,
} from './stream-support.js';
import { messageOf } from '../../../domain/common/message-of.js';

type StreamItem =
  | { readonly kind: 'event'; readonly type: WatchEventType; readonly object: unknown }
  | { readonly kind: 'done'; readonly error: ClusterError | null };

/**
 * One watch of the cursor's scope from resourceVersion `from`, until it ends, errs, goes silent
 * or the stream stops: yields the actionable operations it delivers and moves the
 * resourceVersion along (back to `null` when it expired, so the next round relists). A watch
 * started with a field selector also ends when field selection is abandoned.
 */
export async function* watchOnce(
  cursor: Cursor,
  from: string,
): AsyncGenerator<AgentUpgradeRequest, 'ended' | 'aborted'> {
  const { shared } = cursor;
  const { settings, logger } = shared;
  const selector = fieldSelector(cursor);
  const queue = new EventQueue<StreamItem>();
  const handle = await startWatch(cursor, from, selector, queue);
  if (handle === null) return 'ended';
  const ends = selector === undefined ? shared.signal : AbortSignal.any([shared.signal, shared.unfiltered.signal]);
  try {
    for (;;) {
      const item = await queue.take(settings.idleTimeoutMs, ends);
      if (item === 'aborted') return shared.signal.aborted ? 'aborted' : 'ended';
      if (item === 'idle') {
        logger.warn(
          { idleMs: settings.idleTimeoutMs, scope: cursor.scope },
          'MachineOperation watch went silent; re-watching from the last resourceVersion.',
        );
        return 'ended';
      }
      if (item.kind === 'done') {
        await watchEnded(cursor, item.error, selector !== undefined);
        return 'ended';
      }
      cursor.failures = 0;
      shared.streak.succeeded();
      if (item.type === 'ERROR') {
        // An expired resourceVersion arrives as an ERROR event carrying Status 410: relist.
        const code = (item.object as { code?: unknown } | null)?.code;
        if (code === 410) cursor.resourceVersion = null;
        else await backOff(cursor, `the watch reported an error (${String(code)})`, null);
        return 'ended';
      }
      const version = (item.object as { metadata?: { resourceVersion?: unknown } } | null)?.metadata?.resourceVersion;
      if (typeof version === 'string' && version !== '') cursor.resourceVersion = version;
      if (item.type === 'ADDED' || item.type === 'MODIFIED') {
        const request = await actionable(item.object, shared);
        if (request !== null) yield request;
      }
    }
  } finally {
    handle.abort();
  }
}

async function watchEnded(cursor: Cursor, error: ClusterError | null, selected: boolean): Promise<void> {
  if (error === null) return;
  if (error.status === 410) cursor.resourceVersion = null;
  else if (!abandonFieldSelector(cursor, error, selected))
    await backOff(cursor, `the watch ended (${error.message})`, error);
}

/** Starts a watch from `from` that feeds `queue`; `null` when it could not start (after backing off). */
async function startWatch(
  cursor: Cursor,
  from: string,
  selector: string | undefined,
  queue: EventQueue<StreamItem>,
): Promise<WatchHandle | null> {
  const { shared } = cursor;
  try {
    return await shared.client.watch(
      {
        resourceVersion: from,
        timeoutSeconds: watchTimeoutSeconds(shared.settings),
        ...(selector === undefined ? {} : { fieldSelector: selector }),
      },
      (type, object) => queue.push({ kind: 'event', type, object }),
      (error) => queue.push({ kind: 'done', error }),
    );
  } catch (error) {
    if (!abandonFieldSelector(cursor, error, selector !== undefined))
      await backOff(cursor, `watch failed to start (${messageOf(error)})`, error);
    return null;
  }
}
