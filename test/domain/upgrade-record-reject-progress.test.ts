/** Rejected record texts, part three: the slots, the digest, the flags, the failure and the size. */
import { describe, expect, it } from 'vitest';
import {
  parseRecord,
  RECORD_MESSAGE_MAX_LENGTH,
  RECORD_TEXT_MAX_BYTES,
  serializeRecord,
} from '../../src/domain/node/record/upgrade-record.js';
import { DIGEST, fresh, mutate } from './upgrade-record-fixtures.js';

describe('parseRecord rejects with E_RECORD', () => {
  const cases: readonly [string, string][] = [
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
});
