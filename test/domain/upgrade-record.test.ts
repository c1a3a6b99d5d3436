import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/common/digest.js';
import {
  isKubernetesName,
  isMachineName,
  newUpgradeRecord,
  parseRecord,
  RECORD_MESSAGE_MAX_LENGTH,
  RECORD_TEXT_MAX_BYTES,
  serializeRecord,
  withCandidate,
  withCandidateDigest,
  withFailure,
  withSwitchCommitted,
  type NewRecordInput,
  type RecordedFailure,
  type UpgradeRecord,
} from '../../src/domain/node/record/upgrade-record.js';

const DIGEST = 'a'.repeat(64) as Sha256;
const INSTANCE = '0123456789abcdef0123456789abcdef';

const input: NewRecordInput = {
  operationName: 'upgrade-node-1',
  operationUid: '7d2c1a9e-0f4b-4c7e-9a51-6b3f0d2e8c11',
  instanceId: INSTANCE,
  activeMachine: 'kube1',
};

function created(overrides: Partial<NewRecordInput> = {}): UpgradeRecord {
  const result = newUpgradeRecord({ ...input, ...overrides });
  if (!result.ok) throw new Error(`test setup: ${result.failure.message}`);
  return result.value;
}

const fresh = created();
const chosen = withCandidate(fresh, 'green', 'blue');
const digested = withCandidateDigest(chosen, DIGEST);
const committed = withSwitchCommitted(digested);
const failedBefore = withFailure(
  chosen,
  { reason: 'ExecutionFailed', code: 'E_DIGEST_MISMATCH', message: 'the archive digest does not match' },
  false,
);
const failedAfter = withFailure(
  committed,
  { reason: 'DaemonFailed', code: 'E_UNHEALTHY', message: 'the candidate did not become healthy' },
  true,
);
const minimal = created({ operationUid: null, activeMachine: null });

const lifecycle: readonly [string, UpgradeRecord][] = [
  ['fresh', fresh],
  ['minimal', minimal],
  ['candidate chosen', chosen],
  ['candidate digest', digested],
  ['switch committed', committed],
  ['failed before the switch', failedBefore],
  ['failed after the switch', failedAfter],
  ['blue candidate', withCandidate(fresh, 'blue', 'green')],
  [
    'unicode message',
    withFailure(
      fresh,
      { reason: 'DaemonFailed', code: 'E_SERVICE', message: 'unit failed: “aks-flex-node” ✗ \u{1F4A5}' },
      false,
    ),
  ],
];

/** The serialised form of `committed` as a plain object, to mutate in rejection cases. */
function baseObject(): Record<string, unknown> {
  return JSON.parse(serializeRecord(failedAfter)) as Record<string, unknown>;
}

function mutate(change: (record: Record<string, any>) => void): string {
  const value = baseObject();
  change(value);
  return JSON.stringify(value);
}

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

describe('parseRecord rejects with E_RECORD', () => {
  const cases: readonly [string, string][] = [
    ['empty text', ''],
    ['whitespace', '  \n'],
    ['invalid JSON', '{"kind":'],
    ['trailing garbage', `${serializeRecord(fresh)}x`],
    ['two documents', `${serializeRecord(fresh)}${serializeRecord(fresh)}`],
    ['null', 'null'],
    ['array', '[]'],
    ['string', '"AgentUpgradeRecord"'],
    ['number', '1'],
    ['true', 'true'],
    ['empty object', '{}'],
    [
      'wrong kind',
      mutate((r) => {
        r.kind = 'AgentUpgradeState';
      }),
    ],
    [
      'kind in lower case',
      mutate((r) => {
        r.kind = 'agentupgraderecord';
      }),
    ],
    [
      'missing kind',
      mutate((r) => {
        delete r.kind;
      }),
    ],
    [
      'schemaVersion 0',
      mutate((r) => {
        r.schemaVersion = 0;
      }),
    ],
    [
      'schemaVersion 2',
      mutate((r) => {
        r.schemaVersion = 2;
      }),
    ],
    [
      'schemaVersion as a string',
      mutate((r) => {
        r.schemaVersion = '1';
      }),
    ],
    [
      'schemaVersion 1.5',
      mutate((r) => {
        r.schemaVersion = 1.5;
      }),
    ],
    [
      'missing schemaVersion',
      mutate((r) => {
        delete r.schemaVersion;
      }),
    ],
    ...(
      [
        'operation',
        'instanceId',
        'activeMachine',
        'candidate',
        'previous',
        'candidateDigest',
        'switchCommitted',
        'recoveryRequired',
        'failure',
      ] as const
    ).map(
      (key) =>
        [
          `missing ${key}`,
          mutate((r) => {
            delete r[key];
          }),
        ] as [string, string],
    ),
    [
      'missing operation.name',
      mutate((r) => {
        delete r.operation.name;
      }),
    ],
    [
      'missing operation.uid',
      mutate((r) => {
        delete r.operation.uid;
      }),
    ],
    [
      'missing failure.reason',
      mutate((r) => {
        delete r.failure.reason;
      }),
    ],
    [
      'missing failure.code',
      mutate((r) => {
        delete r.failure.code;
      }),
    ],
    [
      'missing failure.message',
      mutate((r) => {
        delete r.failure.message;
      }),
    ],
    [
      'unknown top-level key',
      mutate((r) => {
        r.extra = true;
      }),
    ],
    ['unknown top-level key __proto__', serializeRecord(fresh).replace('{', '{"__proto__":{},')],
    [
      'unknown key in operation',
      mutate((r) => {
        r.operation.namespace = 'default';
      }),
    ],
    [
      'unknown key in failure',
      mutate((r) => {
        r.failure.detail = 'x';
      }),
    ],
    [
      'operation null',
      mutate((r) => {
        r.operation = null;
      }),
    ],
    [
      'operation array',
      mutate((r) => {
        r.operation = [];
      }),
    ],
    [
      'operation string',
      mutate((r) => {
        r.operation = 'upgrade-node-1';
      }),
    ],
    [
      'operation.name number',
      mutate((r) => {
        r.operation.name = 1;
      }),
    ],
    [
      'operation.name null',
      mutate((r) => {
        r.operation.name = null;
      }),
    ],
    [
      'operation.name invalid',
      mutate((r) => {
        r.operation.name = 'Not_A_Name';
      }),
    ],
    [
      'operation.uid number',
      mutate((r) => {
        r.operation.uid = 7;
      }),
    ],
    [
      'operation.uid malformed',
      mutate((r) => {
        r.operation.uid = 'a b';
      }),
    ],
    [
      'instanceId number',
      mutate((r) => {
        r.instanceId = 123;
      }),
    ],
    [
      'instanceId null',
      mutate((r) => {
        r.instanceId = null;
      }),
    ],
    [
      'instanceId short',
      mutate((r) => {
        r.instanceId = INSTANCE.slice(2);
      }),
    ],
    [
      'instanceId upper-case',
      mutate((r) => {
        r.instanceId = INSTANCE.toUpperCase();
      }),
    ],
    [
      'instanceId non-hex',
      mutate((r) => {
        r.instanceId = 'z'.repeat(32);
      }),
    ],
    [
      'activeMachine number',
      mutate((r) => {
        r.activeMachine = 1;
      }),
    ],
    [
      'activeMachine "../../etc"',
      mutate((r) => {
        r.activeMachine = '../../etc';
      }),
    ],
    [
      'activeMachine ".."',
      mutate((r) => {
        r.activeMachine = '..';
      }),
    ],
    [
      'activeMachine "a..b"',
      mutate((r) => {
        r.activeMachine = 'a..b';
      }),
    ],
    [
      'activeMachine absolute',
      mutate((r) => {
        r.activeMachine = '/var/lib/machines/kube1';
      }),
    ],
    [
      'activeMachine empty',
      mutate((r) => {
        r.activeMachine = '';
      }),
    ],
    [
      'activeMachine hidden',
      mutate((r) => {
        r.activeMachine = '.kube1';
      }),
    ],
    [
      'activeMachine too long',
      mutate((r) => {
        r.activeMachine = 'k'.repeat(65);
      }),
    ],
    [
      'candidate "red"',
      mutate((r) => {
        r.candidate = 'red';
      }),
    ],
    [
      'candidate "Blue"',
      mutate((r) => {
        r.candidate = 'Blue';
      }),
    ],
    [
      'candidate number',
      mutate((r) => {
        r.candidate = 0;
      }),
    ],
    [
      'previous "red"',
      mutate((r) => {
        r.previous = 'red';
      }),
    ],
    [
      'previous boolean',
      mutate((r) => {
        r.previous = false;
      }),
    ],
    [
      'candidate without previous',
      mutate((r) => {
        r.previous = null;
        r.switchCommitted = false;
      }),
    ],
    [
      'previous without candidate',
      mutate((r) => {
        r.candidate = null;
        r.switchCommitted = false;
      }),
    ],
    [
      'equal candidate and previous',
      mutate((r) => {
        r.previous = r.candidate;
      }),
    ],
    [
      'switchCommitted without candidate',
      mutate((r) => {
        r.candidate = null;
        r.previous = null;
      }),
    ],
    [
      'candidateDigest upper-case',
      mutate((r) => {
        r.candidateDigest = DIGEST.toUpperCase();
      }),
    ],
    [
      'candidateDigest prefixed',
      mutate((r) => {
        r.candidateDigest = `sha256:${DIGEST}`;
      }),
    ],
    [
      'candidateDigest short',
      mutate((r) => {
        r.candidateDigest = DIGEST.slice(1);
      }),
    ],
    [
      'candidateDigest number',
      mutate((r) => {
        r.candidateDigest = 1;
      }),
    ],
    [
      'switchCommitted string',
      mutate((r) => {
        r.switchCommitted = 'true';
      }),
    ],
    [
      'switchCommitted number',
      mutate((r) => {
        r.switchCommitted = 1;
      }),
    ],
    [
      'switchCommitted null',
      mutate((r) => {
        r.switchCommitted = null;
      }),
    ],
    [
      'recoveryRequired string',
      mutate((r) => {
        r.recoveryRequired = 'false';
      }),
    ],
    [
      'recoveryRequired null',
      mutate((r) => {
        r.recoveryRequired = null;
      }),
    ],
    [
      'failure string',
      mutate((r) => {
        r.failure = 'boom';
      }),
    ],
    [
      'failure array',
      mutate((r) => {
        r.failure = [];
      }),
    ],
    [
      'failure false',
      mutate((r) => {
        r.failure = false;
      }),
    ],
    [
      'failure.reason unknown',
      mutate((r) => {
        r.failure.reason = 'Failed';
      }),
    ],
    [
      'failure.reason null',
      mutate((r) => {
        r.failure.reason = null;
      }),
    ],
    [
      'failure.code unknown',
      mutate((r) => {
        r.failure.code = 'E_NOPE';
      }),
    ],
    [
      'failure.code number',
      mutate((r) => {
        r.failure.code = 3;
      }),
    ],
    [
      'failure.message number',
      mutate((r) => {
        r.failure.message = 42;
      }),
    ],
    [
      'failure.message null',
      mutate((r) => {
        r.failure.message = null;
      }),
    ],
    [
      'over-long failure.message',
      mutate((r) => {
        r.failure.message = 'x'.repeat(RECORD_MESSAGE_MAX_LENGTH + 1);
      }),
    ],
    ['over-size text', `${serializeRecord(fresh).slice(0, -2)}${' '.repeat(RECORD_TEXT_MAX_BYTES)}}\n`],
  ];

  it.each(cases)('%s', (_name, text) => {
    const result = parseRecord(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.failure.code).toBe('E_RECORD');
  });

  it('the base object of the rejection cases parses', () => {
    expect(parseRecord(JSON.stringify(baseObject())).ok).toBe(true);
  });

  it.each([
    [
      'at most the maximum message length',
      mutate((r) => {
        r.failure.message = 'x'.repeat(RECORD_MESSAGE_MAX_LENGTH);
      }),
    ],
    [
      'padding up to the size limit',
      (() => {
        const text = serializeRecord(fresh);
        return `${text}${' '.repeat(RECORD_TEXT_MAX_BYTES - text.length)}`;
      })(),
    ],
  ])('accepts %s', (_name, text) => {
    expect(parseRecord(text).ok).toBe(true);
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
