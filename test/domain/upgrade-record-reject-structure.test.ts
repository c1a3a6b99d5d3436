/** Rejected record texts, part one: the document, its kind and version, missing and unknown keys. */
import { describe, expect, it } from 'vitest';
import {
  parseRecord,
  RECORD_MESSAGE_MAX_LENGTH,
  RECORD_TEXT_MAX_BYTES,
  serializeRecord,
} from '../../src/domain/node/record/upgrade-record.js';
import { baseObject, fresh, mutate } from './upgrade-record-fixtures.js';

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
