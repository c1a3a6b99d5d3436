/** Rejected record texts, part two: the operation, the instance id and the active machine. */
import { describe, expect, it } from 'vitest';
import { parseRecord } from '../../src/domain/node/record/upgrade-record.js';
import { INSTANCE, mutate } from './upgrade-record-fixtures.js';

describe('parseRecord rejects with E_RECORD', () => {
  const cases: readonly [string, string][] = [
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
  ];

  it.each(cases)('%s', (_name, text) => {
    const result = parseRecord(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.failure.code).toBe('E_RECORD');
  });
});
