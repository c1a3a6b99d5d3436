// Reads of a collection, for every resource alike: the list (paged with continue tokens, filtered
// by selectors and by namespace, waiting for a resourceVersion the store has not reached as a real
// server does, then 504) and the start of a watch. A page costs a binary search plus the objects
// it scans; nothing is copied (the stored objects are immutable) and each is serialized once.

import type { ServerResponse } from 'node:http';
import { isJsonObject, parseJson } from './json.js';
import { jsonOf, keyOf, type ObjectCollection, type RevisionClock } from './object-collection.js';
import { apiVersionOf } from './resources.js';
import { parseFieldSelector, parseLabelSelector, type Selector } from './selectors.js';
import { fail } from './status.js';
import type { Timers } from './timers.js';
import type { StoredObject } from './types.js';
import { WatchStream } from './watch.js';

export interface CollectionContext {
  readonly clock: RevisionClock;
  readonly timers: Timers;
  readonly bookmarkIntervalMs: number;
  /** How long a read at a resourceVersion newer than the store's waits for it before the 504. */
  readonly tooLargeResourceVersionWaitMs: number;
  /** Open watch streams; each removes itself when its connection closes. */
  readonly watches: Set<WatchStream>;
  /** Counts the object events written to watch streams. */
  readonly onWatchEvent: () => void;
}

/** A collection as one request reads it: all of it, or one namespace of it. */
export interface ReadScope {
  readonly collection: ObjectCollection;
  readonly namespace: string | undefined;
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
 * A list at `resourceVersion=N` newer than anything stored waits (bounded) for the store to get
 * there, then answers 504 with `retryAfterSeconds`, as the watch cache does.
 */
async function awaitResourceVersion(ctx: CollectionContext, raw: string | undefined): Promise<void> {
  if (raw === undefined || raw === '' || raw === '0') return;
  const wanted = Number(raw);
  if (!Number.isInteger(wanted) || wanted < 0) throw fail(400, `invalid resource version: ${raw}`, 'BadRequest');
  const deadlineMs = Date.now() + ctx.tooLargeResourceVersionWaitMs;
  while (ctx.clock.current() < wanted && Date.now() < deadlineMs) await ctx.timers.sleep(50);
  if (ctx.clock.current() >= wanted) return;
  throw fail(504, `Timeout: Too large resource version: ${wanted}, current: ${ctx.clock.current()}`, 'Timeout', {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
}

/** The selectors of `query` (answered 400 before anything else when malformed) and the namespace. */
function selectorOf(scope: ReadScope, query: Readonly<Record<string, string>>): Selector {
  const { resource } = scope.collection;
  const fieldSelector = parseFieldSelector(query['fieldSelector'], resource.selectableFields, resource.namespaced);
  const labelSelector = parseLabelSelector(query['labelSelector']);
  const { namespace } = scope;
  return (object) =>
    (namespace === undefined || object.metadata.namespace === namespace) &&
    fieldSelector(object) &&
    labelSelector(object);
}

/**
 * A page of the list, as the JSON text of the List object. Later pages report the first page's
 * resourceVersion, as a real server does; unlike one, they show current objects rather than a
 * snapshot at that version.
 */
export async function list(
  ctx: CollectionContext,
  scope: ReadScope,
  query: Readonly<Record<string, string>>,
): Promise<string> {
  const selector = selectorOf(scope, query);
  const limit = positiveInt(query['limit'], 'limit');
  const token = query['continue'] ? decodeContinue(query['continue']) : undefined;
  const { collection, namespace } = scope;
  if (token !== undefined && collection.isExpired(token.rv)) {
    throw fail(
      410,
      'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
      'Expired',
    );
  }
  if (token === undefined) await awaitResourceVersion(ctx, query['resourceVersion']);
  const rv = token?.rv ?? ctx.clock.current();
  const prefix = namespace === undefined ? '' : `${namespace}/`;
  const page = collection.page(prefix, token?.start, limit, selector);
  const metadata: Record<string, string | number> = { resourceVersion: String(rv) };
  const last = page.items.at(-1);
  if (page.more && last !== undefined) {
    metadata['continue'] = encodeContinue({ rv, start: keyOf(last.metadata) });
    if (query['fieldSelector'] === undefined && query['labelSelector'] === undefined)
      metadata['remainingItemCount'] = page.remaining;
  }
  const { resource } = collection;
  const head = `{"apiVersion":${JSON.stringify(apiVersionOf(resource))},"kind":${JSON.stringify(resource.listKind)}`;
  return `${head},"metadata":${JSON.stringify(metadata)},"items":[${page.items.map((item: StoredObject) => jsonOf(item)).join(',')}]}`;
}

export function startWatch(
  ctx: CollectionContext,
  scope: ReadScope,
  query: Readonly<Record<string, string>>,
  res: ServerResponse,
): void {
  // Selector errors are answered as HTTP 400 before any event, as a real server does.
  const selector = selectorOf(scope, query);
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
    collection: scope.collection,
    clock: ctx.clock,
    timers: ctx.timers,
    query,
    selector,
    resourceVersion,
    bookmarkIntervalMs: bookmarks ? ctx.bookmarkIntervalMs : undefined,
    timeoutSeconds: positiveInt(query['timeoutSeconds'], 'timeoutSeconds'),
    onObjectEvent: ctx.onWatchEvent,
    onClose: () => ctx.watches.delete(stream),
  });
  ctx.watches.add(stream);
  stream.start();
}
