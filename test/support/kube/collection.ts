// Reads of the MachineOperation collection: the list (paged with continue tokens, filtered by
// selectors, waiting for a resourceVersion the store has not reached as a real server does, then
// 504) and the start of a watch.

import type { ServerResponse } from 'node:http';
import { isJsonObject, type JsonObject, parseJson } from './json.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import { fail } from './status.js';
import type { KubeStore } from './store.js';
import type { Timers } from './timers.js';
import { API_VERSION, LIST_KIND, type MachineOperation } from './types.js';
import { WatchStream } from './watch.js';

export interface CollectionContext {
  readonly store: KubeStore;
  readonly timers: Timers;
  readonly selectableFields: readonly string[];
  readonly bookmarkIntervalMs: number;
  /** How long a read at a resourceVersion newer than the store's waits for it before the 504. */
  readonly tooLargeResourceVersionWaitMs: number;
  /** Open watch streams; each removes itself when its connection closes. */
  readonly watches: Set<WatchStream>;
}

interface ContinueToken {
  readonly rv: number;
  readonly start: string;
}

function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

function decodeContinue(raw: string): ContinueToken {
  const parsed = parseJson(Buffer.from(raw, 'base64url').toString('utf8'));
  if (isJsonObject(parsed) && typeof parsed['rv'] === 'number' && typeof parsed['start'] === 'string') {
    return { rv: parsed['rv'], start: parsed['start'] };
  }
  throw fail(400, 'continue key is not valid: incorrect encoded start resourceVersion', 'BadRequest');
}

export function positiveInt(raw: string | undefined, field: string): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw fail(400, `invalid ${field}: ${raw}`, 'BadRequest');
  return n === 0 ? undefined : n;
}

/**
 * A page of the list. Later pages report the first page's resourceVersion, as a real server does;
 * unlike one, they show current objects rather than a snapshot at that version.
 */
interface MachineOperationList {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: JsonObject;
  readonly items: MachineOperation[];
}

/**
 * A list at `resourceVersion=N` newer than anything stored waits (bounded) for the store to get
 * there, then answers 504 with `retryAfterSeconds`, as the watch cache does.
 */
async function awaitResourceVersion(ctx: CollectionContext, raw: string | undefined): Promise<void> {
  if (raw === undefined || raw === '' || raw === '0') return;
  const wanted = Number(raw);
  if (!Number.isInteger(wanted) || wanted < 0) throw fail(400, `invalid resource version: ${raw}`, 'BadRequest');
  const deadlineMs = Date.now() + ctx.tooLargeResourceVersionWaitMs;
  while (ctx.store.currentRv() < wanted && Date.now() < deadlineMs) await ctx.timers.sleep(50);
  if (ctx.store.currentRv() >= wanted) return;
  throw fail(504, `Timeout: Too large resource version: ${wanted}, current: ${ctx.store.currentRv()}`, 'Timeout', {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

export async function list(
  ctx: CollectionContext,
  query: Readonly<Record<string, string>>,
): Promise<MachineOperationList> {
  const fieldSelector = parseFieldSelector(query['fieldSelector'], ctx.selectableFields);
  const labelSelector = parseLabelSelector(query['labelSelector']);
  const limit = positiveInt(query['limit'], 'limit');
  const token = query['continue'] ? decodeContinue(query['continue']) : undefined;
  if (token !== undefined && ctx.store.isExpired(token.rv)) {
    throw fail(
      410,
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      'Expired',
    );
  }
  if (token === undefined) await awaitResourceVersion(ctx, query['resourceVersion']);
  const rv = token?.rv ?? ctx.store.currentRv();
  const matching = ctx.store
    .list()
    .filter((op) => token === undefined || op.metadata.name > token.start)
    .filter((op) => fieldSelector(op) && labelSelector(op));
  const items = limit === undefined ? matching : matching.slice(0, limit);
  const metadata: JsonObject = { resourceVersion: String(rv) };
  const last = items.at(-1);
  if (items.length < matching.length && last !== undefined) {
    metadata['continue'] = encodeContinue({ rv, start: last.metadata.name });
    if (query['fieldSelector'] === undefined && query['labelSelector'] === undefined) {
      metadata['remainingItemCount'] = matching.length - items.length;
    }
  }
  return { apiVersion: API_VERSION, kind: LIST_KIND, metadata, items };
}

export function startWatch(ctx: CollectionContext, query: Readonly<Record<string, string>>, res: ServerResponse): void {
  // Selector errors are answered as HTTP 400 before any event, as a real server does.
  const fieldSelector = parseFieldSelector(query['fieldSelector'], ctx.selectableFields);
  const labelSelector = parseLabelSelector(query['labelSelector']);
  const rawRv = query['resourceVersion'];
  let resourceVersion: number | undefined;
  if (rawRv !== undefined && rawRv !== '' && rawRv !== '0') {
    resourceVersion = Number(rawRv);
    if (!Number.isInteger(resourceVersion) || resourceVersion < 0)
      throw fail(400, `invalid resource version: ${rawRv}`, 'BadRequest');
  }
  const bookmarks = query['allowWatchBookmarks'] === 'true' || query['allowWatchBookmarks'] === '1';
  const stream = new WatchStream({
    res,
    store: ctx.store,
    timers: ctx.timers,
    query,
    selector: (op) => fieldSelector(op) && labelSelector(op),
    resourceVersion,
    bookmarkIntervalMs: bookmarks ? ctx.bookmarkIntervalMs : undefined,
    timeoutSeconds: positiveInt(query['timeoutSeconds'], 'timeoutSeconds'),
    onClose: () => ctx.watches.delete(stream),
  });
  ctx.watches.add(stream);
  stream.start();
}
