import { describe, expect, it } from 'vitest';
import {
  machineTargetOf,
  selectorMatches,
  targetsMachine,
  type LabelSelector,
} from '../../src/domain/common/machine-selector.js';

const labels = { 'kubernetes.io/os': 'linux', pool: 'flex', zone: 'a' };
const selector = (partial: Partial<LabelSelector>): LabelSelector => ({
  matchLabels: {},
  matchExpressions: [],
  ...partial,
});

describe('label selectors (Kubernetes semantics)', () => {
  it.each([
    ['empty selector', selector({}), true],
    ['matching label', selector({ matchLabels: { pool: 'flex' } }), true],
    ['different value', selector({ matchLabels: { pool: 'gpu' } }), false],
    ['missing label', selector({ matchLabels: { rack: '1' } }), false],
    ['In', selector({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a', 'b'] }] }), true],
    ['In, value not listed', selector({ matchExpressions: [{ key: 'zone', operator: 'In', values: ['c'] }] }), false],
    ['In, label missing', selector({ matchExpressions: [{ key: 'rack', operator: 'In', values: ['1'] }] }), false],
    ['NotIn', selector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['c'] }] }), true],
    ['NotIn, listed', selector({ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }), false],
    ['NotIn, label missing', selector({ matchExpressions: [{ key: 'rack', operator: 'NotIn', values: ['1'] }] }), true],
    ['Exists', selector({ matchExpressions: [{ key: 'pool', operator: 'Exists', values: [] }] }), true],
    ['Exists, missing', selector({ matchExpressions: [{ key: 'rack', operator: 'Exists', values: [] }] }), false],
    ['DoesNotExist', selector({ matchExpressions: [{ key: 'rack', operator: 'DoesNotExist', values: [] }] }), true],
    [
      'DoesNotExist, present',
      selector({ matchExpressions: [{ key: 'pool', operator: 'DoesNotExist', values: [] }] }),
      false,
    ],
    [
      'labels and expressions, one fails',
      selector({ matchLabels: { pool: 'flex' }, matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] }),
      false,
    ],
  ])('%s', (_name, given, expected) => {
    expect(selectorMatches(given, labels)).toBe(expected);
  });
});

describe('which operations address this machine', () => {
  it.each([
    ['machineRef equal', { machineRef: 'node-1' }, true],
    ['machineRef other', { machineRef: 'node-2' }, false],
    ['selector matching', { machineSelector: { matchLabels: { pool: 'flex' } } }, true],
    ['selector not matching', { machineSelector: { matchLabels: { pool: 'gpu' } } }, false],
    ['both set (invalid)', { machineRef: 'node-1', machineSelector: {} }, false],
    ['neither set', {}, false],
    ['empty machineRef', { machineRef: '' }, false],
    ['malformed selector', { machineSelector: { matchLabels: { pool: 7 } } }, false],
    [
      'unknown operator',
      { machineSelector: { matchExpressions: [{ key: 'pool', operator: 'Like', values: ['f'] }] } },
      false,
    ],
    ['In without values', { machineSelector: { matchExpressions: [{ key: 'pool', operator: 'In' }] } }, false],
    [
      'Exists with values',
      { machineSelector: { matchExpressions: [{ key: 'pool', operator: 'Exists', values: ['x'] }] } },
      false,
    ],
    ['not an object', 'node-1', false],
  ])('%s', (_name, spec, expected) => {
    expect(targetsMachine(machineTargetOf(spec), 'node-1', labels)).toBe(expected);
  });

  it('a selector matches nothing when the Node could not be read', () => {
    expect(targetsMachine(machineTargetOf({ machineSelector: {} }), 'node-1', null)).toBe(false);
  });
});
