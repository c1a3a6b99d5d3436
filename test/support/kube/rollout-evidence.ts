// What a rollout on a real API server left behind, read as the admin: the rollout and its
// operations, the Nodes' agent-version annotations, the Events, and the audit log — which says
// when each operation was created and finished, what each status write of the controller said,
// and so whether anything happened in an order it must not.

import type { AuditEvent, RealCluster } from './real-cluster.js';

export const ROLLOUTS = '/apis/agent-upgrade.dev/v1alpha1/agentrollouts';
export const RELEASES = '/apis/agent-upgrade.dev/v1alpha1/agentreleases';
const OPS = '/apis/unbounded-cloud.io/v1alpha3/machineoperations';
const AGENT_VERSION = 'agent-upgrade.dev/agent-version';

export interface ChildOperation {
  readonly name: string;
  readonly machineRef: string;
  readonly purpose: string;
  readonly wave: string;
  readonly phase: string | null;
  readonly reason: string | null;
}

export interface Rollout {
  readonly spec: Record<string, unknown>;
  readonly status?: RolloutStatus;
}

/** The part of AgentRollout status these tests read. */
export interface RolloutStatus {
  readonly phase?: string;
  readonly progress?: string;
  readonly currentWave?: string;
  readonly counts?: { readonly inFlight?: number; readonly failed?: number; readonly succeeded?: number };
  readonly halt?: { readonly id: string; readonly reason: string; readonly wave: string };
  readonly failures?: { readonly byLabel?: Record<string, number>; readonly byReason?: Record<string, number> };
  readonly rollback?: { readonly phase: string; readonly size: number; readonly rolledBack: number };
}

async function getJson<T>(cluster: RealCluster, path: string): Promise<T> {
  const answer = await cluster.admin('GET', path);
  if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text}`);
  return answer.json as T;
}

export const rolloutNamed = (cluster: RealCluster, name: string): Promise<Rollout> =>
  getJson<Rollout>(cluster, `${ROLLOUTS}/${name}`);

export async function createObject(cluster: RealCluster, collection: string, body: object): Promise<void> {
  const answer = await cluster.admin('POST', collection, body);
  if (answer.status !== 201) throw new Error(`POST ${collection}: ${answer.status} ${answer.text}`);
}

/** The rollout's operations, by their labels (forward and rollback). */
export async function childOperations(cluster: RealCluster, rollout: string): Promise<ChildOperation[]> {
  const selector = encodeURIComponent(`agent-upgrade.dev/rollout=${rollout}`);
  type Raw = {
    metadata: { name: string; labels: Record<string, string> };
    spec: { machineRef: string };
    status?: { phase?: string; conditions?: { reason?: string }[] };
  };
  const list = await getJson<{ items: Raw[] }>(cluster, `${OPS}?labelSelector=${selector}`);
  return list.items.map((item) => ({
    name: item.metadata.name,
    machineRef: item.spec.machineRef,
    purpose: item.metadata.labels['agent-upgrade.dev/purpose'] ?? '',
    wave: item.metadata.labels['agent-upgrade.dev/wave'] ?? '',
    phase: item.status?.phase ?? null,
    reason: item.status?.conditions?.[0]?.reason ?? null,
  }));
}

/** Every Node's `agent-upgrade.dev/agent-version` annotation (undefined: not reported). */
export async function agentVersions(cluster: RealCluster): Promise<Record<string, string | undefined>> {
  type Raw = { metadata: { name: string; annotations?: Record<string, string> } };
  const list = await getJson<{ items: Raw[] }>(cluster, '/api/v1/nodes');
  return Object.fromEntries(list.items.map((node) => [node.metadata.name, node.metadata.annotations?.[AGENT_VERSION]]));
}

/** The Events about `regarding` in `default`, oldest first: reason, and the replica that recorded it. */
export async function eventsAbout(
  cluster: RealCluster,
  regarding: string,
): Promise<{ readonly reason: string; readonly instance: string }[]> {
  type Raw = { reason: string; eventTime: string; reportingInstance: string; regarding?: { name?: string } };
  const list = await getJson<{ items: Raw[] }>(cluster, '/apis/events.k8s.io/v1/namespaces/default/events');
  return list.items
    .filter((event) => event.regarding?.name === regarding)
    .sort((a, b) => a.eventTime.localeCompare(b.eventTime))
    .map((event) => ({ reason: event.reason, instance: event.reportingInstance }));
}

export const eventReasons = async (cluster: RealCluster, regarding: string): Promise<string[]> =>
  (await eventsAbout(cluster, regarding)).map((event) => event.reason);

const completed = (event: AuditEvent): boolean => event.stage === 'ResponseComplete';
const at = (event: AuditEvent): string => event.stageTimestamp ?? '';

/** The controller's accepted status writes of `rollout`, in order: when, and what they said. */
export function rolloutStatusWrites(
  audit: readonly AuditEvent[],
  rollout: string,
): { readonly at: string; readonly status: RolloutStatus }[] {
  return audit
    .filter(
      (e) =>
        completed(e) &&
        e.objectRef?.resource === 'agentrollouts' &&
        e.objectRef.subresource === 'status' &&
        e.objectRef.name === rollout &&
        e.responseStatus?.code === 200,
    )
    .map((e) => ({ at: at(e), status: (e.requestObject?.status ?? {}) as RolloutStatus }));
}

/** Every create of an operation, answered or refused (409 AlreadyExists included): name, when, code. */
export function operationCreates(
  audit: readonly AuditEvent[],
): { readonly name: string; readonly at: string; readonly code: number | undefined }[] {
  return audit
    .filter((e) => completed(e) && e.verb === 'create' && e.objectRef?.resource === 'machineoperations')
    .map((e) => ({ name: e.objectRef?.name ?? '', at: at(e), code: e.responseStatus?.code }));
}

/** When each operation's first terminal status (Complete or Failed) was accepted. */
export function terminalWrites(audit: readonly AuditEvent[]): Map<string, string> {
  const ends = new Map<string, string>();
  for (const e of audit) {
    const phase = e.requestObject?.status?.['phase'];
    const terminal = phase === 'Complete' || phase === 'Failed';
    if (!completed(e) || e.objectRef?.subresource !== 'status' || e.responseStatus?.code !== 200 || !terminal) continue;
    const name = e.objectRef?.name ?? '';
    if (e.objectRef?.resource === 'machineoperations' && !ends.has(name)) ends.set(name, at(e));
  }
  return ends;
}

/**
 * Machines that had two live operations at once: an operation is live from its accepted create
 * to its first accepted terminal status (for ever when it has none). Audit timestamps are RFC 3339
 * with microseconds, so they order as strings.
 */
export function machinesWithOverlappingOperations(
  audit: readonly AuditEvent[],
  operations: readonly ChildOperation[],
): string[] {
  const created = new Map(
    operationCreates(audit)
      .filter((c) => c.code === 201)
      .map((c) => [c.name, c.at]),
  );
  const ends = terminalWrites(audit);
  const byMachine = new Map<string, { start: string; end: string }[]>();
  for (const operation of operations) {
    const start = created.get(operation.name);
    if (start === undefined) throw new Error(`no audited create of ${operation.name}`);
    const intervals = byMachine.get(operation.machineRef) ?? [];
    intervals.push({ start, end: ends.get(operation.name) ?? '9999' });
    byMachine.set(operation.machineRef, intervals);
  }
  const overlapping: string[] = [];
  for (const [machine, intervals] of byMachine) {
    intervals.sort((a, b) => a.start.localeCompare(b.start));
    if (intervals.some((interval, i) => i > 0 && interval.start < (intervals[i - 1]?.end ?? '')))
      overlapping.push(machine);
  }
  return overlapping;
}

/** A kubectl table, each row keyed by the header's column names (cells are cut at the header's offsets). */
export function parseTable(text: string): Record<string, string>[] {
  const [header, ...rows] = text.split('\n').filter((line) => line.trim() !== '');
  if (header === undefined) return [];
  const columns = [...header.matchAll(/\S+/g)].map((match) => ({ name: match[0], start: match.index }));
  return rows.map((row) =>
    Object.fromEntries(
      columns.map((column, i) => [column.name, row.slice(column.start, columns[i + 1]?.start ?? row.length).trim()]),
    ),
  );
}
