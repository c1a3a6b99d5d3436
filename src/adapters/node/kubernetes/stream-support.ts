import { targetsMachine } from '../../../domain/common/machine-selector.js';
import type { ClusterError } from '../../../domain/common/port-errors.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { AgentUpgradeRequest } from '../../../ports/node/operation-store.js';
import type { KubeClient } from '../../common/kubernetes/kube-client.js';
import { AGENT_UPGRADE } from '../../common/kubernetes/machine-operation-resource.js';
import { readMachineOperation, type MachineOperationView } from './machine-operation.js';
import type { NodeLabels } from './node-labels.js';
import type { UnauthorizedLimit, UnauthorizedStreak } from '../../common/kubernetes/unauthorized-streak.js';

export interface StreamSettings {
  readonly machineName: string;
  /**
   * Each watch asks the server to end it after a random time in [min, max) seconds (client-go's
   * reflector: 5 to 10 minutes), so a fleet that lost its API server does not reconnect in step.
   */
  readonly watchTimeoutMinSeconds: number;
  readonly watchTimeoutMaxSeconds: number;
  /** A watch that delivers nothing (not even a bookmark) this long is presumed dead. */
  readonly idleTimeoutMs: number;
  /** Backoff: doubling from here up to the maximum, each delay drawn from its upper half. */
  readonly retryDelayMs: number;
  readonly retryDelayMaxMs: number;
  readonly listPageSize: number;
  readonly nodeLabelsTtlMs: number;
  /** When refused credentials stop being worth retrying (the stream then throws). */
  readonly unauthorized: UnauthorizedLimit;
  /** Uniform in [0, 1): the watch timeouts and the backoff jitter. */
  readonly random: () => number;
}

/** What both scopes of the stream share. */
export interface Shared {
  readonly client: KubeClient;
  readonly settings: StreamSettings;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Aborted when the stream ends, for whatever reason. */
  readonly signal: AbortSignal;
  /** The uids yielded by this process: each operation at most once. */
  readonly yielded: Set<string>;
  readonly labels: NodeLabels;
  readonly streak: UnauthorizedStreak;
  /** Cleared for good when the server cannot select on spec.machineRef. */
  useFieldSelector: boolean;
  /** Aborted when it is cleared, so that watches started with a field selector end now. */
  readonly unfiltered: AbortController;
  /** "Connected to the cluster." was logged: once, after the first list that worked. */
  connected: boolean;
}

/**
 * `machine`: operations whose spec.machineRef is this machine; `unassigned`: operations without
 * a machineRef (spec.machineRef is empty to the field selector), where the machineSelector ones
 * are. Without server-side field selectors the `machine` scope lists everything and
 * `unassigned` ends.
 */
export type Scope = 'machine' | 'unassigned';

/** One scope's list+watch position. */
export interface Cursor {
  readonly shared: Shared;
  readonly scope: Scope;
  /** Where the next watch starts; `null` = relist first. */
  resourceVersion: string | null;
  /** Whether resourceVersion came from a field-selected list (it must be relisted without one). */
  filtered: boolean;
  /** Failures in a row, for the backoff; reset by anything that works. */
  failures: number;
}

export function fieldSelector(cursor: Cursor): string | undefined {
  if (!cursor.shared.useFieldSelector) return undefined;
  return cursor.scope === 'machine' ? `spec.machineRef=${cursor.shared.settings.machineName}` : 'spec.machineRef=';
}

/**
 * A field-selected list or watch answered 400: the server has no selectable field
 * spec.machineRef, so filter on this side from now on (for both scopes). True when that was it.
 */
export function abandonFieldSelector(cursor: Cursor, error: unknown, selected: boolean): boolean {
  if (!selected || (error as ClusterError | null)?.status !== 400) return false;
  const { shared } = cursor;
  if (shared.useFieldSelector) {
    shared.useFieldSelector = false;
    shared.unfiltered.abort();
    shared.logger.info({}, 'MachineOperation field selectors are not supported by the server; filtering client-side.');
  }
  return true;
}

/** The timeoutSeconds of the next watch. */
export function watchTimeoutSeconds(settings: StreamSettings): number {
  const { watchTimeoutMinSeconds: min, watchTimeoutMaxSeconds: max } = settings;
  return max <= min ? min : Math.min(max - 1, Math.floor(min + settings.random() * (max - min)));
}

/**
 * Waits before the next attempt after `error`. Throws instead when the credentials keep being
 * refused (UnauthorizedStreak): that is not going to get better by waiting.
 */
export async function backOff(cursor: Cursor, why: string, error: unknown): Promise<void> {
  const { settings, streak, logger, clock, signal } = cursor.shared;
  streak.record(error);
  streak.check(error);
  cursor.failures += 1;
  const ceilingMs = Math.min(settings.retryDelayMaxMs, settings.retryDelayMs * 2 ** Math.min(cursor.failures - 1, 16));
  const delayMs = Math.round(ceilingMs / 2 + (settings.random() * ceilingMs) / 2);
  logger.warn(
    { delayMs, attempt: cursor.failures, scope: cursor.scope },
    `MachineOperation watch: ${why}; retrying in ${delayMs} ms.`,
  );
  await clock.sleep(delayMs, signal).catch(() => undefined);
}

export async function* actionableOf(items: readonly unknown[], shared: Shared): AsyncGenerator<AgentUpgradeRequest> {
  for (const item of items) {
    const request = await actionable(item, shared);
    if (request !== null) yield request;
  }
}

/** The request for `object` when it is a Pending AgentUpgrade for this machine not yielded before. */
export async function actionable(object: unknown, shared: Shared): Promise<AgentUpgradeRequest | null> {
  const { machineName } = shared.settings;
  const operation = readMachineOperation(object);
  if (operation === null || operation.operationKind !== AGENT_UPGRADE || shared.yielded.has(operation.uid)) return null;
  if (operation.phase !== null && operation.phase !== 'Pending') return null;
  const labels = operation.target.kind === 'selector' ? await shared.labels.get() : null;
  if (!targetsMachine(operation.target, machineName, labels)) return null;
  shared.yielded.add(operation.uid);
  return requestOf(operation);
}

function requestOf(operation: MachineOperationView): AgentUpgradeRequest {
  return {
    operation: { name: operation.name, uid: operation.uid },
    phase: operation.phase,
    parameters: operation.parameters,
  };
}

export async function listAll(
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
