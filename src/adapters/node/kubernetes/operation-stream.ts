import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { AgentUpgradeRequest } from '../../../ports/node/operation-store.js';
import type { KubeClient } from '../../common/kubernetes/kube-client.js';
import { mergeStreams } from '../../common/kubernetes/merge-streams.js';
import { NodeLabels } from './node-labels.js';
import { watchOnce } from './operation-watch.js';
import {
  abandonFieldSelector,
  actionableOf,
  backOff,
  fieldSelector,
  listAll,
  type Cursor,
  type Scope,
  type Shared,
  type StreamSettings,
} from './stream-support.js';
import type { UnauthorizedStreak } from '../../common/kubernetes/unauthorized-streak.js';
import { messageOf } from '../../../domain/common/message-of.js';

export type { StreamSettings } from './stream-support.js';

/**
 * List, then watch from the list's resourceVersion, for as long as `signal` lets it: every
 * AgentUpgrade operation for this machine that is still Pending is yielded once per process.
 * Survives dropped streams (re-watch from the last resourceVersion), silent streams (watchdog),
 * 410 Gone (relist) and API errors (jittered backoff); throws a ClusterError `unauthorized` when
 * the credentials keep being refused (`streak`). Operations of other kinds or machines, and
 * operations already InProgress or terminal, are never yielded: they are someone else's or
 * belong to the upgrade record.
 *
 * With server-side field selectors two list+watch scopes run side by side: `spec.machineRef=<this
 * machine>` and `spec.machineRef=` (no machineRef: the machineSelector operations, matched here
 * against the Node's labels). So neither scope receives other machines' machineRef operations.
 * When the server cannot select on spec.machineRef (400 to a list or a watch), one scope lists
 * and watches everything and filters on this side.
 */
export async function* operationStream(
  client: KubeClient,
  settings: StreamSettings,
  clock: Clock,
  logger: Logger,
  signal: AbortSignal,
  streak: UnauthorizedStreak,
): AsyncGenerator<AgentUpgradeRequest> {
  const ends = new AbortController();
  const stop = (): void => ends.abort();
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop();
  const shared: Shared = {
    client,
    settings,
    clock,
    logger,
    signal: ends.signal,
    yielded: new Set<string>(),
    labels: new NodeLabels(client, settings.machineName, settings.nodeLabelsTtlMs, clock, logger),
    streak,
    useFieldSelector: true,
    unfiltered: new AbortController(),
    connected: false,
  };
  try {
    yield* mergeStreams([scopeStream(shared, 'machine'), scopeStream(shared, 'unassigned')]);
  } finally {
    signal.removeEventListener('abort', stop);
    // The scope still running (the other one failed, or the consumer stopped) ends now.
    stop();
  }
}

async function* scopeStream(shared: Shared, scope: Scope): AsyncGenerator<AgentUpgradeRequest> {
  const cursor: Cursor = { shared, scope, resourceVersion: null, filtered: false, failures: 0 };
  while (!shared.signal.aborted) {
    if (!shared.useFieldSelector) {
      if (scope === 'unassigned') return;
      if (cursor.filtered) cursor.resourceVersion = null;
    }
    const from = cursor.resourceVersion ?? (yield* relist(cursor));
    if (from === null) continue;
    if ((yield* watchOnce(cursor, from)) === 'aborted') return;
  }
}

/**
 * Lists the scope (paged), yields the actionable operations and returns the resourceVersion to
 * watch from; `null` when the list failed (after backing off), and the caller tries again.
 */
async function* relist(cursor: Cursor): AsyncGenerator<AgentUpgradeRequest, string | null> {
  const { shared } = cursor;
  const { client, settings, logger } = shared;
  const selector = fieldSelector(cursor);
  let listed: { items: unknown[]; resourceVersion: string };
  try {
    listed = await listAll(client, selector, settings.listPageSize);
  } catch (error) {
    if (!abandonFieldSelector(cursor, error, selector !== undefined))
      await backOff(cursor, `list failed (${messageOf(error)})`, error);
    return null;
  }
  shared.streak.succeeded();
  // Said only after a list succeeded: a loaded kubeconfig proves nothing about the server, the credentials or RBAC.
  if (!shared.connected)
    logger.info(
      { server: client.server, machine: settings.machineName, operations: listed.items.length },
      'Connected to the cluster.',
    );
  shared.connected = true;
  yield* actionableOf(listed.items, shared);
  cursor.resourceVersion = listed.resourceVersion;
  cursor.filtered = selector !== undefined;
  cursor.failures = 0;
  return listed.resourceVersion;
}
