import { isSha256, type Sha256 } from '../../common/digest.js';
import { isErrorCode, type ErrorCode } from '../../common/error-codes.js';
import { fail, ok, type Result } from '../../common/failure.js';
import { invariant } from '../../common/invariant.js';
import { checkExactKeys, isPlainObject, parseEnvelope } from './json-envelope.js';
import { isSlotName, type SlotName } from '../layout/slot.js';

/**
 * The durable upgrade record (docs/protocol.md#terms): the single source of truth for a managed
 * upgrade across processes. It is written atomically and durably after every change; an unknown
 * kind or schema version, or any field of the wrong shape, is an error and never guessed at.
 */
export const UPGRADE_RECORD_KIND = 'AgentUpgradeRecord';
export const UPGRADE_RECORD_SCHEMA_VERSION = 1;
export const RECORD_TEXT_MAX_BYTES = 64 * 1024;
export const RECORD_MESSAGE_MAX_LENGTH = 1024;

/** The cluster-facing reason a terminal failure is published with. */
/** Untrusted: rows 5–7 refused a release the publisher did not sign (signed releases). */
export type FailureReason = 'ExecutionFailed' | 'DaemonFailed' | 'Untrusted';

export interface RecordedFailure {
  readonly reason: FailureReason;
  readonly code: ErrorCode;
  /** Already redacted: no URL query, fragment or userinfo, no candidate output. */
  readonly message: string;
}

export interface UpgradeRecord {
  readonly kind: typeof UPGRADE_RECORD_KIND;
  readonly schemaVersion: typeof UPGRADE_RECORD_SCHEMA_VERSION;
  readonly operation: { readonly name: string; readonly uid: string | null };
  /** The daemon instance that wrote the record first; it never consumes its own record. */
  readonly instanceId: string;
  /** The nspawn machine that was active when the upgrade started, if any. */
  readonly activeMachine: string | null;
  readonly candidate: SlotName | null;
  readonly previous: SlotName | null;
  readonly candidateDigest: Sha256 | null;
  readonly switchCommitted: boolean;
  readonly recoveryRequired: boolean;
  readonly failure: RecordedFailure | null;
  /**
   * The candidate was proven (healthy, nspawn equal, state committed): Complete is the decided
   * outcome. Written before Complete is published, so a process that restarts between the
   * publication and the record's deletion publishes Complete again instead of re-judging.
   */
  readonly completed: boolean;
}

export interface NewRecordInput {
  readonly operationName: string;
  readonly operationUid: string | null;
  readonly instanceId: string;
  readonly activeMachine: string | null;
}

export function newUpgradeRecord(input: NewRecordInput): Result<UpgradeRecord> {
  const record: UpgradeRecord = {
    kind: UPGRADE_RECORD_KIND,
    schemaVersion: UPGRADE_RECORD_SCHEMA_VERSION,
    operation: { name: input.operationName, uid: input.operationUid },
    instanceId: input.instanceId,
    activeMachine: input.activeMachine,
    candidate: null,
    previous: null,
    candidateDigest: null,
    switchCommitted: false,
    recoveryRequired: false,
    failure: null,
    completed: false,
  };
  const problem = validateRecord(record);
  return problem === null ? ok(record) : fail('E_RECORD', problem);
}

/** Records the slot chosen for the candidate and the slot that was running. */
export function withCandidate(record: UpgradeRecord, candidate: SlotName, previous: SlotName): UpgradeRecord {
  invariant(candidate !== previous, 'the candidate slot must differ from the previous slot');
  return { ...record, candidate, previous };
}

export function withCandidateDigest(record: UpgradeRecord, digest: Sha256): UpgradeRecord {
  return { ...record, candidateDigest: digest };
}

export function withSwitchCommitted(record: UpgradeRecord): UpgradeRecord {
  return { ...record, switchCommitted: true };
}

export function withCompleted(record: UpgradeRecord): UpgradeRecord {
  invariant(
    record.failure === null && record.candidate !== null,
    'only a record with a candidate and without a failure completes',
  );
  return { ...record, completed: true };
}

/**
 * Records a terminal failure. An existing failure is kept (the first cause is the useful one);
 * `recoveryRequired` is only ever raised, never cleared, by this function.
 */
export function withFailure(record: UpgradeRecord, next: RecordedFailure, recoveryRequired: boolean): UpgradeRecord {
  return {
    ...record,
    failure: record.failure ?? { ...next, message: clampMessage(next.message) },
    recoveryRequired: record.recoveryRequired || recoveryRequired,
  };
}

/** Canonical serialisation: fixed key order, two-space indentation, one trailing newline. */
export function serializeRecord(record: UpgradeRecord): string {
  const canonical = {
    kind: record.kind,
    schemaVersion: record.schemaVersion,
    operation: { name: record.operation.name, uid: record.operation.uid },
    instanceId: record.instanceId,
    activeMachine: record.activeMachine,
    candidate: record.candidate,
    previous: record.previous,
    candidateDigest: record.candidateDigest,
    switchCommitted: record.switchCommitted,
    recoveryRequired: record.recoveryRequired,
    failure:
      record.failure === null
        ? null
        : { reason: record.failure.reason, code: record.failure.code, message: record.failure.message },
    completed: record.completed,
  };
  return `${JSON.stringify(canonical, null, 2)}\n`;
}

/** Strict parse: every key present with the right type, nothing unknown. Errors are `E_RECORD`. */
export function parseRecord(text: string): Result<UpgradeRecord> {
  const envelope = parseEnvelope(text, {
    what: 'the upgrade record',
    where: 'record',
    code: 'E_RECORD',
    kind: UPGRADE_RECORD_KIND,
    schemaVersion: UPGRADE_RECORD_SCHEMA_VERSION,
    maxLength: RECORD_TEXT_MAX_BYTES,
    keys: RECORD_KEYS,
  });
  if (!envelope.ok) return envelope;
  const value = envelope.value;
  const shapeProblem = checkShape(value);
  if (shapeProblem !== null) return fail('E_RECORD', shapeProblem);
  const record = value as unknown as UpgradeRecord;
  const problem = validateRecord(record);
  return problem === null ? ok(record) : fail('E_RECORD', problem);
}

const RECORD_KEYS = [
  'kind',
  'schemaVersion',
  'operation',
  'instanceId',
  'activeMachine',
  'candidate',
  'previous',
  'candidateDigest',
  'switchCommitted',
  'recoveryRequired',
  'failure',
  'completed',
] as const;

function checkShape(value: Record<string, unknown>): string | null {
  const operation = value.operation;
  if (!isPlainObject(operation)) return 'record.operation must be an object';
  const operationKeys = checkExactKeys(operation, ['name', 'uid'], 'record.operation');
  if (operationKeys !== null) return operationKeys;
  if (typeof operation.name !== 'string') return 'record.operation.name must be a string';
  if (operation.uid !== null && typeof operation.uid !== 'string')
    return 'record.operation.uid must be a string or null';
  if (typeof value.instanceId !== 'string') return 'record.instanceId must be a string';
  if (value.activeMachine !== null && typeof value.activeMachine !== 'string')
    return 'record.activeMachine must be a string or null';
  for (const key of ['candidate', 'previous'] as const) {
    if (value[key] !== null && !isSlotName(value[key])) return `record.${key} must be "blue", "green" or null`;
  }
  if (value.candidateDigest !== null && !isSha256(value.candidateDigest))
    return 'record.candidateDigest must be a SHA-256 digest or null';
  for (const key of ['switchCommitted', 'recoveryRequired', 'completed'] as const) {
    if (typeof value[key] !== 'boolean') return `record.${key} must be a boolean`;
  }
  const failureValue = value.failure;
  if (failureValue === null) return null;
  if (!isPlainObject(failureValue)) return 'record.failure must be an object or null';
  const failureKeys = checkExactKeys(failureValue, ['reason', 'code', 'message'], 'record.failure');
  if (failureKeys !== null) return failureKeys;
  if (!['ExecutionFailed', 'DaemonFailed', 'Untrusted'].includes(String(failureValue.reason))) {
    return 'record.failure.reason must be "ExecutionFailed", "DaemonFailed" or "Untrusted"';
  }
  if (!isErrorCode(failureValue.code)) return 'record.failure.code must be a known error code';
  if (typeof failureValue.message !== 'string') return 'record.failure.message must be a string';
  return null;
}

/** Semantic rules shared by construction and parsing. */
function validateRecord(record: UpgradeRecord): string | null {
  if (!isKubernetesName(record.operation.name)) return 'record.operation.name must be a Kubernetes object name';
  if (record.operation.uid !== null && !/^[0-9A-Za-z-]{1,64}$/.test(record.operation.uid))
    return 'record.operation.uid is malformed';
  if (!/^[0-9a-f]{32}$/.test(record.instanceId)) return 'record.instanceId must be 32 lowercase hexadecimal characters';
  if (record.activeMachine !== null && !isMachineName(record.activeMachine))
    return 'record.activeMachine is not a valid machine name';
  if ((record.candidate === null) !== (record.previous === null))
    return 'record.candidate and record.previous are set together';
  if (record.candidate !== null && record.candidate === record.previous)
    return 'record.candidate and record.previous must differ';
  if (record.switchCommitted && record.candidate === null) return 'record.switchCommitted requires a candidate';
  if (record.completed && (record.failure !== null || record.candidate === null))
    return 'record.completed requires a candidate and no failure';
  if (record.failure !== null && record.failure.message.length > RECORD_MESSAGE_MAX_LENGTH)
    return 'record.failure.message is too long';
  return null;
}

/** Kubernetes object names: a DNS-1123 subdomain of at most 253 characters. */
export function isKubernetesName(name: string): boolean {
  return (
    name.length >= 1 &&
    name.length <= 253 &&
    /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name)
  );
}

/** nspawn machine names are used as a path component, so they are kept to a safe alphabet. */
export function isMachineName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name) && name !== '..' && !name.includes('..');
}

function clampMessage(message: string): string {
  return message.length <= RECORD_MESSAGE_MAX_LENGTH ? message : `${message.slice(0, RECORD_MESSAGE_MAX_LENGTH - 1)}…`;
}
