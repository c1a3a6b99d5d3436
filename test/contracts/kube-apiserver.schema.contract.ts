/**
 * The schema half of the kube-apiserver conformance suite (kube-apiserver.contract.ts registers
 * it): what the CRD's openAPIV3Schema prunes and refuses, with the 422 Status a client gets.
 */
import { expect, it } from 'vitest';
import type { Suite } from './kube-apiserver.contract.js';
import {
  causesOf,
  completeCondition,
  operation,
  type Operation,
  OPS,
  statusShape,
  upgrade,
  warningsOf,
} from './kube-apiserver.support.js';

export const INVALID = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 };
const NOT_CHECKED = 'FieldValueInvalid <nil>';

/** Creates the schema refuses, with the causes a client gets (sorted). */
const REFUSED_CREATES: readonly [string, string, Record<string, unknown>, readonly string[]][] = [
  [
    'both targets',
    'both',
    upgrade('node-a', { machineSelector: { matchLabels: { a: 'b' } } }),
    ['FieldValueInvalid spec'],
  ],
  ['no target', 'neither', { operationKind: 'AgentUpgrade' }, ['FieldValueInvalid spec']],
  ['an empty machineRef', 'empty-ref', upgrade(''), ['FieldValueInvalid spec.machineRef']],
  [
    'an unknown operationKind',
    'bad-kind',
    upgrade('node-a', { operationKind: 'Explode' }),
    [NOT_CHECKED, 'FieldValueNotSupported spec.operationKind'],
  ],
  [
    'a missing operationKind',
    'no-kind',
    { machineRef: 'node-a' },
    [NOT_CHECKED, 'FieldValueRequired spec.operationKind'],
  ],
  [
    'a parameter that is not a string',
    'bad-parameter',
    upgrade('node-a', { parameters: { a: 1 } }),
    [NOT_CHECKED, 'FieldValueTypeInvalid spec.parameters.a'],
  ],
  [
    'a negative ttlSecondsAfterFinished',
    'bad-ttl',
    upgrade('node-a', { ttlSecondsAfterFinished: -1 }),
    ['FieldValueInvalid spec.ttlSecondsAfterFinished'],
  ],
  [
    'a bad matchExpression',
    'bad-expression',
    {
      operationKind: 'AgentUpgrade',
      machineSelector: { matchExpressions: [{ key: 'k', operator: 'Near' }, { operator: 'In' }] },
    },
    [
      NOT_CHECKED,
      'FieldValueNotSupported spec.machineSelector.matchExpressions[0].operator',
      'FieldValueRequired spec.machineSelector.matchExpressions[1].key',
    ],
  ],
  ['a name that is no DNS subdomain', 'Bad_Name', upgrade('node-a'), ['FieldValueInvalid metadata.name']],
  [
    'a machineRef over maxLength',
    'long-ref',
    upgrade('n'.repeat(254)),
    [NOT_CHECKED, 'FieldValueTooLong spec.machineRef'],
  ],
];

/** Creates whose metadata the server refuses, with the causes a client gets (sorted). */
const REFUSED_METADATA: readonly [string, string, Record<string, unknown>, readonly string[]][] = [
  [
    'a label value over 63 characters',
    'long-label',
    { labels: { a: 'x'.repeat(64) } },
    ['FieldValueInvalid metadata.labels'],
  ],
  [
    'a label key that is no qualified name',
    'bad-label-key',
    { labels: { 'bad key!': 'v' } },
    ['FieldValueInvalid metadata.labels'],
  ],
  [
    'a label value with a space',
    'bad-label-value',
    { labels: { k: 'bad value' } },
    ['FieldValueInvalid metadata.labels'],
  ],
  [
    'an annotation key that is no qualified name',
    'bad-annotation',
    { annotations: { 'bad key!': 'v' } },
    ['FieldValueInvalid metadata.annotations'],
  ],
  [
    'an owner reference with nothing in it',
    'empty-owner',
    { ownerReferences: [{ apiVersion: '', kind: '', name: '', uid: '' }] },
    [
      'FieldValueInvalid metadata.ownerReferences.apiVersion',
      'FieldValueInvalid metadata.ownerReferences.kind',
      'FieldValueInvalid metadata.ownerReferences.name',
      'FieldValueInvalid metadata.ownerReferences.uid',
    ],
  ],
  [
    'two controlling owners',
    'two-controllers',
    {
      ownerReferences: [
        { apiVersion: 'a.io/v1', kind: 'K', name: 'n1', uid: 'u1', controller: true },
        { apiVersion: 'a.io/v1', kind: 'K', name: 'n2', uid: 'u2', controller: true },
      ],
    },
    ['FieldValueInvalid metadata.ownerReferences'],
  ],
];

/** Status patches the schema refuses. */
const REFUSED_STATUSES: readonly [string, Record<string, unknown>, readonly string[]][] = [
  ['an unknown phase', { phase: 'Bogus' }, [NOT_CHECKED, 'FieldValueNotSupported status.phase']],
  ['a time that is no date-time', { startedAt: 'yesterday' }, [NOT_CHECKED, 'FieldValueTypeInvalid status.startedAt']],
  ['a date without a time', { completedAt: '2024-01-01' }, [NOT_CHECKED, 'FieldValueTypeInvalid status.completedAt']],
  [
    'an incomplete condition',
    { conditions: [{ type: 'Ready' }] },
    [
      NOT_CHECKED,
      'FieldValueRequired status.conditions[0].lastTransitionTime',
      'FieldValueRequired status.conditions[0].reason',
      'FieldValueRequired status.conditions[0].status',
    ],
  ],
  [
    'two conditions of one type',
    { conditions: [completeCondition('A'), completeCondition('A')] },
    ['FieldValueDuplicate status.conditions[1]'],
  ],
  ['a message that is not a string', { message: 5 }, [NOT_CHECKED, 'FieldValueTypeInvalid status.message']],
];

export function schemaCases(suite: Suite): void {
  it('prunes undeclared fields anywhere, with one 299 warning each, and drops the status of a create', async () => {
    const body = operation('pruned', upgrade('node-a', { bogusSpecField: 1 }), {
      metadata: { name: 'pruned', bogusMeta: 'x' },
      status: { phase: 'Complete', bogusStatusField: 1 },
      bogusTopLevel: { a: 1 },
    });
    const created = await suite.api.admin('POST', OPS, { body });
    expect(created.status, created.text).toBe(201);
    const op = created.json as Operation & Record<string, unknown>;
    expect({ spec: op.spec, status: op.status, top: op['bogusTopLevel'] }).toEqual({
      spec: upgrade('node-a'),
      status: undefined,
      top: undefined,
    });
    expect(warningsOf(created)).toEqual([
      'unknown field "metadata.bogusMeta"',
      'unknown field "bogusTopLevel"',
      'unknown field "spec.bogusSpecField"',
      'unknown field "status.bogusStatusField"',
    ]);
    const status = { phase: 'InProgress', bogus: 1, conditions: [{ ...completeCondition('Completed'), extra: 2 }] };
    const patched = await suite.patch('pruned', { status }, '/status');
    expect(patched.status, patched.text).toBe(200);
    expect((patched.json as Operation).status).toEqual({
      phase: 'InProgress',
      conditions: [completeCondition('Completed')],
    });
    expect(warningsOf(patched)).toEqual(['unknown field "status.bogus"', 'unknown field "status.conditions[0].extra"']);
  });

  it.each(REFUSED_CREATES)(
    'refuses a create with %s with a 422 Status naming each cause',
    async (_what, name, spec, causes) => {
      const answer = await suite.api.admin('POST', OPS, { body: operation(name, spec) });
      expect(answer.status, answer.text).toBe(422);
      expect(statusShape(answer)).toEqual({
        ...INVALID,
        details: { name, group: 'unbounded-cloud.io', kind: 'MachineOperation' },
      });
      expect(causesOf(answer)).toEqual(causes);
      expect((await suite.api.admin('GET', `${OPS}/${name}`)).status).toBe(404);
    },
  );
}

/** ObjectMeta as the server decodes and validates it on every kind. */
export function metadataCases(suite: Suite): void {
  it.each(REFUSED_METADATA)(
    'refuses a create with %s (422 naming the metadata field)',
    async (_what, name, metadata, causes) => {
      const answer = await suite.api.admin('POST', OPS, {
        body: operation(name, upgrade('node-a'), { metadata: { name, ...metadata } }),
      });
      expect(answer.status, answer.text).toBe(422);
      expect(causesOf(answer)).toEqual(causes);
    },
  );

  it('keeps owner references (pruning their unknown fields with a warning) and labels a create carries', async () => {
    const owner = {
      apiVersion: 'agent-upgrade.dev/v1alpha1',
      kind: 'AgentRollout',
      name: 'r',
      uid: 'u-1',
      controller: true,
    };
    const body = operation('owned', upgrade('node-a'), {
      metadata: {
        name: 'owned',
        labels: { 'agent-upgrade.dev/rollout': 'r' },
        ownerReferences: [{ ...owner, bogus: 1 }],
      },
    });
    const created = await suite.api.admin('POST', OPS, { body });
    expect(created.status, created.text).toBe(201);
    const stored = await suite.get('owned');
    expect({
      labels: stored.metadata.labels,
      owners: (stored.metadata as Record<string, unknown>)['ownerReferences'],
    }).toEqual({
      labels: { 'agent-upgrade.dev/rollout': 'r' },
      owners: [owner],
    });
    expect(warningsOf(created)).toEqual(['unknown field "metadata.ownerReferences[0].bogus"']);
  });
}

export function statusSchemaCases(suite: Suite): void {
  it.each(REFUSED_STATUSES)(
    'refuses a status with %s with a 422 Status and keeps the stored one',
    async (_what, status, causes) => {
      const name = `refused-status-${causes.length}-${Object.keys(status).join('-')}`.toLowerCase();
      const before = await suite.create(name, upgrade('node-a'));
      const answer = await suite.patch(name, { status }, '/status');
      expect(answer.status, answer.text).toBe(422);
      expect(statusShape(answer)).toEqual({
        ...INVALID,
        details: { name, group: 'unbounded-cloud.io', kind: 'MachineOperation' },
      });
      expect(causesOf(answer)).toEqual(causes);
      expect(await suite.get(name)).toEqual(before);
    },
  );
}

/** date-time as the server's format checker reads it. */
export function dateTimeCases(suite: Suite): void {
  it('accepts the RFC 3339 date-times the server accepts (fractions, offsets, lower-case t and z)', async () => {
    await suite.create('times', upgrade('node-a'));
    for (const startedAt of ['2024-01-01T00:00:00.123+02:00', '2024-02-29t23:59:59z', '2024-01-01T00:00:00Z']) {
      const answer = await suite.patch('times', { status: { startedAt } }, '/status');
      expect(answer.status, startedAt).toBe(200);
    }
    for (const startedAt of [
      '2023-02-29T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01 00:00:00Z',
      '2024-01-01T00:00:00+0200',
    ])
      expect((await suite.patch('times', { status: { startedAt } }, '/status')).status, startedAt).toBe(422);
  });
}
