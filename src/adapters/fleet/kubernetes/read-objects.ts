import { parseTimestamp } from '../../../domain/fleet/spec/time-text.js';
import type {
  LeaseFacts,
  NodeFacts,
  NodeReady,
  OperationPhase,
  ReleaseObject,
  RolloutObject,
} from '../../../domain/fleet/order/snapshot.js';
import type { OperationFacts } from '../../../ports/fleet/controller-cluster.js';
import { AGENT_UPGRADE } from '../../common/kubernetes/machine-operation-resource.js';
import { isOneOf } from '../../../domain/common/one-of.js';

/**
 * The API server's JSON, read into the planner's plain shapes. Anything unreadable (no name, no
 * uid) is `null` and the informer ignores it; fields the planner parses itself (spec, status)
 * stay as they are. Only the fields the planner reads are kept, so 10,000 cached Nodes hold
 * their labels, one annotation and their Ready condition, not their whole status.
 */

const AGENT_VERSION_ANNOTATION = 'agent-upgrade.dev/agent-version';
const PHASES: readonly OperationPhase[] = ['Pending', 'InProgress', 'Complete', 'Failed'];

interface Metadata {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation: number;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  readonly raw: Record<string, unknown>;
}

export function nameOf(raw: unknown): string | null {
  const metadata = isRecord(raw) ? raw['metadata'] : undefined;
  const name = isRecord(metadata) ? metadata['name'] : undefined;
  return typeof name === 'string' && name !== '' ? name : null;
}

export function readNode(raw: unknown): NodeFacts | null {
  const metadata = readMetadata(raw);
  if (metadata === null) return null;
  const version = metadata.annotations[AGENT_VERSION_ANNOTATION];
  const ready = readyCondition(raw);
  return {
    name: metadata.name,
    uid: metadata.uid,
    labels: metadata.labels,
    annotations: version === undefined ? {} : { [AGENT_VERSION_ANNOTATION]: version },
    ...(ready !== null && { ready }),
  };
}

function readyCondition(raw: unknown): NodeReady | null {
  const status = isRecord(raw) && isRecord(raw['status']) ? raw['status'] : {};
  const conditions = Array.isArray(status['conditions']) ? status['conditions'].filter(isRecord) : [];
  const ready = conditions.find((entry) => entry['type'] === 'Ready');
  const value = ready?.['status'];
  if (value !== 'True' && value !== 'False' && value !== 'Unknown') return null;
  return { status: value, sinceMs: parseTimestamp(ready?.['lastTransitionTime']) };
}

/** A kubelet's Lease: its name (the Node's), when it was last renewed and for how long. */
export function readNodeLease(raw: unknown): LeaseFacts | null {
  const metadata = readMetadata(raw);
  if (metadata === null || !isRecord(raw)) return null;
  const spec = isRecord(raw['spec']) ? raw['spec'] : {};
  const seconds = spec['leaseDurationSeconds'];
  return {
    name: metadata.name,
    renewMs: parseTimestamp(spec['renewTime']),
    durationMs: typeof seconds === 'number' && Number.isSafeInteger(seconds) && seconds > 0 ? seconds * 1000 : null,
  };
}

export function readRollout(raw: unknown): RolloutObject | null {
  const metadata = readMetadata(raw);
  if (metadata === null || !isRecord(raw)) return null;
  const { name, uid, generation, resourceVersion, annotations } = metadata;
  return {
    name,
    uid,
    generation,
    resourceVersion,
    annotations,
    spec: raw['spec'] ?? null,
    status: raw['status'] ?? null,
  };
}

export function readRelease(raw: unknown): ReleaseObject | null {
  const metadata = readMetadata(raw);
  if (metadata === null || !isRecord(raw)) return null;
  const { name, uid, generation, resourceVersion } = metadata;
  return { name, uid, generation, resourceVersion, spec: raw['spec'] ?? null, status: raw['status'] ?? null };
}

/** Only AgentUpgrade operations with a machineRef matter to a rollout; the rest read as `null`. */
export function readOperation(raw: unknown): OperationFacts | null {
  const metadata = readMetadata(raw);
  if (metadata === null || !isRecord(raw)) return null;
  const spec = isRecord(raw['spec']) ? raw['spec'] : {};
  const status = isRecord(raw['status']) ? raw['status'] : {};
  if (spec['operationKind'] !== AGENT_UPGRADE || typeof spec['machineRef'] !== 'string') return null;
  const conditions = Array.isArray(status['conditions']) ? status['conditions'].filter(isRecord) : [];
  const completed = conditions.find((entry) => entry['type'] === 'Completed');
  const phase = status['phase'];
  return {
    name: metadata.name,
    uid: metadata.uid,
    machineRef: spec['machineRef'],
    labels: metadata.labels,
    ownerUid: controllerUid(metadata.raw['ownerReferences']),
    phase: isOneOf(PHASES, phase) ? phase : null,
    reason: typeof completed?.['reason'] === 'string' ? completed['reason'] : null,
    message: typeof status['message'] === 'string' ? status['message'] : null,
    createdMs: parseTimestamp(metadata.raw['creationTimestamp']) ?? 0,
    startedMs: parseTimestamp(status['startedAt']),
    completedMs: parseTimestamp(status['completedAt']) ?? parseTimestamp(completed?.['lastTransitionTime']),
  };
}

function readMetadata(raw: unknown): Metadata | null {
  const metadata = isRecord(raw) ? raw['metadata'] : undefined;
  if (!isRecord(metadata)) return null;
  const { name, uid, resourceVersion, generation } = metadata;
  if (typeof name !== 'string' || typeof uid !== 'string' || typeof resourceVersion !== 'string') return null;
  return {
    name,
    uid,
    resourceVersion,
    generation: typeof generation === 'number' && Number.isSafeInteger(generation) ? generation : 0,
    labels: stringMap(metadata['labels']),
    annotations: stringMap(metadata['annotations']),
    raw: metadata,
  };
}

function controllerUid(references: unknown): string | null {
  if (!Array.isArray(references)) return null;
  const owner = references.find((entry) => isRecord(entry) && entry['controller'] === true);
  return isRecord(owner) && typeof owner['uid'] === 'string' ? owner['uid'] : null;
}

function stringMap(value: unknown): Record<string, string> {
  if (!isRecord(value)) return {};
  const out: Record<string, string> = {};
  for (const [key, entry] of Object.entries(value)) if (typeof entry === 'string') out[key] = entry;
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
