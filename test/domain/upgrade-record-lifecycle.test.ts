import { describe, expect, it } from 'vitest';
import {
  isKubernetesName,
  isMachineName,
  newUpgradeRecord,
  parseRecord,
  RECORD_MESSAGE_MAX_LENGTH,
  serializeRecord,
  withFailure,
  type NewRecordInput,
  type RecordedFailure,
  type UpgradeRecord,
} from '../../src/domain/node/record/upgrade-record.js';
import { chosen, committed, fresh, INSTANCE, input, lifecycle } from './upgrade-record-fixtures.js';

describe('newUpgradeRecord', () => {
  it('starts without a candidate, commit or failure', () => {
    expect(fresh).toEqual({
      kind: 'AgentUpgradeRecord',
      schemaVersion: 1,
      operation: { name: input.operationName, uid: input.operationUid },
      instanceId: INSTANCE,
      activeMachine: 'kube1',
      candidate: null,
      previous: null,
      candidateDigest: null,
      switchCommitted: false,
      recoveryRequired: false,
      failure: null,
      completed: false,
    });
  });

  it.each<[string, Partial<NewRecordInput>]>([
    ['empty operation name', { operationName: '' }],
    ['upper-case operation name', { operationName: 'Upgrade' }],
    ['operation name with a slash', { operationName: 'a/b' }],
    ['operation name too long', { operationName: 'a'.repeat(254) }],
    ['operation name with a leading dash', { operationName: '-a' }],
    ['malformed uid', { operationUid: 'uid with spaces' }],
    ['empty uid', { operationUid: '' }],
    ['uid too long', { operationUid: 'a'.repeat(65) }],
    ['short instance id', { instanceId: INSTANCE.slice(1) }],
    ['upper-case instance id', { instanceId: INSTANCE.toUpperCase() }],
    ['non-hex instance id', { instanceId: 'g'.repeat(32) }],
    ['unsafe active machine', { activeMachine: '../../etc' }],
    ['active machine with a slash', { activeMachine: 'kube1/x' }],
    ['active machine ..', { activeMachine: '..' }],
    ['empty active machine', { activeMachine: '' }],
  ])('rejects %s with E_RECORD', (_name, overrides) => {
    const result = newUpgradeRecord({ ...input, ...overrides });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.failure.code).toBe('E_RECORD');
  });
});

describe('serializeRecord / parseRecord round trip', () => {
  it.each(lifecycle)('%s: parse(serialize(r)) equals r', (_name, record) => {
    expect(parseRecord(serializeRecord(record))).toEqual({ ok: true, value: record });
  });

  it.each(lifecycle)('%s: serialize(parse(text)) is the same text', (_name, record) => {
    const text = serializeRecord(record);
    const parsed = parseRecord(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(serializeRecord(parsed.value)).toBe(text);
  });

  it.each(lifecycle)('%s: canonical text is byte-stable whatever the input key order', (_name, record) => {
    const canonical = serializeRecord(record);
    const reversed = (value: unknown): unknown => {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
      return Object.fromEntries(
        Object.entries(value)
          .reverse()
          .map(([k, v]) => [k, reversed(v)]),
      );
    };
    const shuffled = JSON.stringify(reversed(JSON.parse(canonical)));
    expect(shuffled).not.toBe(canonical);
    const parsed = parseRecord(shuffled);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(serializeRecord(parsed.value)).toBe(canonical);
    // Compact input and an object built in a different order give the same bytes too.
    const compact = parseRecord(JSON.stringify(JSON.parse(canonical)));
    if (compact.ok) expect(serializeRecord(compact.value)).toBe(canonical);
    expect(serializeRecord({ ...(reversed(record) as UpgradeRecord) })).toBe(canonical);
  });

  it('is two-space indented with one trailing newline', () => {
    const text = serializeRecord(fresh);
    expect(text.endsWith('}\n')).toBe(true);
    expect(text.endsWith('\n\n')).toBe(false);
    expect(text.split('\n')[1]).toBe('  "kind": "AgentUpgradeRecord",');
  });
});

describe('withFailure', () => {
  const first: RecordedFailure = { reason: 'ExecutionFailed', code: 'E_DIGEST_MISMATCH', message: 'first' };
  const second: RecordedFailure = { reason: 'DaemonFailed', code: 'E_UNHEALTHY', message: 'second' };

  it.each<[string, UpgradeRecord, RecordedFailure, boolean, RecordedFailure, boolean]>([
    // name, start, next failure, raise?, expected failure, expected recoveryRequired
    ['first failure, no recovery', chosen, first, false, first, false],
    ['first failure, recovery', committed, second, true, second, true],
    ['second failure keeps the first', withFailure(chosen, first, false), second, false, first, false],
    [
      'second failure keeps the first but raises recovery',
      withFailure(chosen, first, false),
      second,
      true,
      first,
      true,
    ],
    ['recovery is never lowered', withFailure(committed, second, true), first, false, second, true],
    ['recovery stays raised on repetition', withFailure(committed, second, true), second, true, second, true],
  ])('%s', (_name, start, next, raise, expectedFailure, expectedRecovery) => {
    const result = withFailure(start, next, raise);
    expect(result.failure).toEqual(expectedFailure);
    expect(result.recoveryRequired).toBe(expectedRecovery);
    expect({ ...result, failure: start.failure, recoveryRequired: start.recoveryRequired }).toEqual(start);
  });

  it.each([
    ['short', 10, 10],
    ['exactly the maximum', RECORD_MESSAGE_MAX_LENGTH, RECORD_MESSAGE_MAX_LENGTH],
    ['one over', RECORD_MESSAGE_MAX_LENGTH + 1, RECORD_MESSAGE_MAX_LENGTH],
    ['far over', 100_000, RECORD_MESSAGE_MAX_LENGTH],
  ])('clamps a %s message so the record still parses', (_name, length, expected) => {
    const record = withFailure(
      fresh,
      { reason: 'DaemonFailed', code: 'E_SERVICE', message: 'm'.repeat(length) },
      false,
    );
    expect(record.failure?.message).toHaveLength(expected);
    expect(parseRecord(serializeRecord(record)).ok).toBe(true);
  });
});

describe('name rules', () => {
  it.each([
    ['upgrade-1', true],
    ['a', true],
    ['a.b-c.d', true],
    ['0abc', true],
    ['a'.repeat(253), true],
    ['', false],
    ['a'.repeat(254), false],
    ['A', false],
    ['-a', false],
    ['a-', false],
    ['a..b', false],
    ['a_b', false],
    ['a/b', false],
  ])('isKubernetesName(%j) → %s', (name, expected) => {
    expect(isKubernetesName(name)).toBe(expected);
  });

  it.each([
    ['kube1', true],
    ['kube2', true],
    ['Kube_1.x-y', true],
    ['k'.repeat(64), true],
    ['k'.repeat(65), false],
    ['', false],
    ['.', false],
    ['..', false],
    ['../../etc', false],
    ['a..b', false],
    ['a/b', false],
    ['.hidden', false],
    ['-dash', false],
    ['kube 1', false],
    ['kube1\n', false],
  ])('isMachineName(%j) → %s', (name, expected) => {
    expect(isMachineName(name)).toBe(expected);
  });
});
