/**
 * The AgentRollout half of the conformance suite's custom-resource cases (kube-apiserver.contract.ts
 * registers it): the schema's defaults, the CEL rules of a create (the name's length, rollback
 * requirements, waves, int-or-string values), the state machine's transition rules, generation
 * and status writes, and a watch of the collection, against the shipped CRD.
 */
import { describe, expect, it } from 'vitest';
import type { Suite } from './kube-apiserver.contract.js';
import { rollout, ROLLOUTS, rolloutSpec, type Stored, stored } from './kube-apiserver.objects.js';
import { causesOf, MERGE_PATCH, rv, statusShape, watchEvents } from './kube-apiserver.support.js';

const NOT_CHECKED = 'FieldValueInvalid <nil>';
const waves = (list: readonly Record<string, unknown>[], extra: Record<string, unknown> = {}) => ({
  strategy: { waves: list, ...extra },
});

async function create(suite: Suite, name: string, spec = rolloutSpec()): Promise<Stored> {
  const answer = await suite.api.admin('POST', ROLLOUTS, { body: rollout(name, spec) });
  expect(answer.status, answer.text).toBe(201);
  return stored(answer);
}

const patch = (suite: Suite, name: string, body: unknown, subresource = '') =>
  suite.api.admin('PATCH', `${ROLLOUTS}/${name}${subresource}`, { body, contentType: MERGE_PATCH });

/** Creates the CEL rules and the schema refuse, with the causes a client gets (sorted). */
const REFUSED: readonly [string, string, Record<string, unknown>, readonly string[]][] = [
  ['a name over 63 characters', 'r'.repeat(64), rolloutSpec(), ['FieldValueInvalid <nil>']],
  [
    'a rolling-back onFailure without a rollback release',
    'arl-no-rollback',
    rolloutSpec({
      rollback: undefined,
      strategy: { waves: [{ name: 'all', percent: 100 }], onFailure: 'RollBackAll' },
    }),
    ['FieldValueInvalid spec'],
  ],
  [
    'state RollBack without a rollback release',
    'arl-rollback-state',
    rolloutSpec({ rollback: undefined, state: 'RollBack' }),
    ['FieldValueInvalid spec'],
  ],
  [
    'a rollback to the release rolled out',
    'arl-same-release',
    rolloutSpec({ rollback: { releaseRef: { name: 'release-b' } } }),
    ['FieldValueInvalid spec'],
  ],
  [
    'waves with a repeated name, both count and percent, and no 100% last',
    'arl-waves',
    rolloutSpec(
      waves([
        { name: 'a', percent: 10 },
        { name: 'a', count: 3, percent: 4 },
        { name: 'c', count: 5 },
      ]),
    ),
    [
      'FieldValueInvalid spec.strategy.waves',
      'FieldValueInvalid spec.strategy.waves',
      'FieldValueInvalid spec.strategy.waves[1]',
    ],
  ],
  [
    'int-or-string values that are neither a count nor a percentage',
    'arl-int-or-string',
    rolloutSpec(
      waves([{ name: 'all', percent: 100, maxInFlight: '101%', failureBudget: -1 }], { maxUnavailable: '5' }),
    ),
    [
      'FieldValueInvalid spec.strategy.maxUnavailable',
      'FieldValueInvalid spec.strategy.waves[0].failureBudget',
      'FieldValueInvalid spec.strategy.waves[0].maxInFlight',
    ],
  ],
  [
    'an int-or-string value that is a boolean',
    'arl-boolean',
    rolloutSpec(waves([{ name: 'all', percent: 100, maxInFlight: true }])),
    [NOT_CHECKED, 'FieldValueTypeInvalid spec.strategy.waves[0].maxInFlight'],
  ],
  [
    'an int-or-string string over maxLength',
    'arl-too-long',
    rolloutSpec(waves([{ name: 'all', percent: 100, maxInFlight: '10000' }])),
    [NOT_CHECKED, 'FieldValueTooLong spec.strategy.waves[0].maxInFlight'],
  ],
];

function createCases(suite: Suite): void {
  it('fills the schema defaults on create (state, onFailure, operationTimeout, quarantineOnHalt, gate)', async () => {
    const created = await create(suite, 'arl-defaults');
    expect(created.spec).toEqual({
      ...rolloutSpec(),
      state: 'Preview',
      strategy: {
        waves: [{ name: 'all', percent: 100, gate: 'Auto' }],
        onFailure: 'Halt',
        operationTimeout: '30m',
        quarantineOnHalt: true,
      },
    });
  });

  it.each(REFUSED)('refuses a rollout with %s (422 naming each cause)', async (_what, name, spec, causes) => {
    const body = rollout(name, JSON.parse(JSON.stringify(spec)) as Record<string, unknown>);
    const answer = await suite.api.admin('POST', ROLLOUTS, { body });
    expect(answer.status, answer.text).toBe(422);
    expect(statusShape(answer)).toMatchObject({
      reason: 'Invalid',
      code: 422,
      details: { name, kind: 'AgentRollout' },
    });
    expect(causesOf(answer)).toEqual(causes);
  });
}

function transitionCases(suite: Suite): void {
  it('moves Preview to Run to RollBack to Abort, refusing each transition the rules forbid, and counts generations', async () => {
    await create(suite, 'arl-states');
    const step = async (spec: Record<string, unknown>, code: number): Promise<number | undefined> => {
      const answer = await patch(suite, 'arl-states', { spec });
      expect(answer.status, `${JSON.stringify(spec)}: ${answer.text}`).toBe(code);
      if (code === 422) expect(causesOf(answer)).toEqual(['FieldValueInvalid spec']);
      return stored(answer).metadata?.generation;
    };
    const generations = [
      await step({ state: 'Run' }, 200),
      await step({ state: 'Preview' }, 422),
      await step({ releaseRef: { name: 'release-c' } }, 422),
      await step({ state: 'RollBack' }, 200),
      await step({ state: 'Run' }, 422),
      await step({ state: 'Abort', rollback: null }, 422),
      await step({ rollback: { releaseRef: { name: 'release-z' } } }, 422),
      await step({ state: 'Abort' }, 200),
      await step({ state: 'Pause' }, 422),
      await step({ state: 'RollBack' }, 200),
    ].filter((generation) => generation !== undefined);
    expect(generations).toEqual([2, 3, 4, 5]);
  });

  it('writes status through /status without a generation bump, and a stale status PUT is 409', async () => {
    const created = await create(suite, 'arl-status');
    const body = (resourceVersion: string) => ({
      apiVersion: 'agent-upgrade.dev/v1alpha1',
      kind: 'AgentRollout',
      metadata: { name: 'arl-status', resourceVersion },
      status: { observedGeneration: 1, phase: 'Preview', counts: { targets: 3, pending: 3 } },
    });
    const put = await suite.api.admin('PUT', `${ROLLOUTS}/arl-status/status`, {
      body: body(created.metadata.resourceVersion),
    });
    expect(put.status, put.text).toBe(200);
    expect({ generation: stored(put).metadata.generation, spec: stored(put).spec }).toEqual({
      generation: 1,
      spec: created.spec,
    });
    const stale = await suite.api.admin('PUT', `${ROLLOUTS}/arl-status/status`, {
      body: body(created.metadata.resourceVersion),
    });
    expect(statusShape(stale)).toMatchObject({
      reason: 'Conflict',
      code: 409,
      details: { name: 'arl-status', group: 'agent-upgrade.dev', kind: 'agentrollouts' },
    });
    const refused = await patch(suite, 'arl-status', { status: { phase: 'Exploded' } }, '/status');
    expect(causesOf(refused)).toEqual([NOT_CHECKED, 'FieldValueNotSupported status.phase']);
  });
}

function watchCases(suite: Suite): void {
  it('watches rollouts from a list resourceVersion: ADDED, MODIFIED for spec and status, DELETED', async () => {
    const listed = await suite.api.admin('GET', ROLLOUTS);
    const from = (listed.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    const created = await create(suite, 'arl-watched');
    const ran = stored(await patch(suite, 'arl-watched', { spec: { state: 'Run' } }));
    const reported = stored(await patch(suite, 'arl-watched', { status: { phase: 'Progressing' } }, '/status'));
    expect((await suite.api.admin('DELETE', `${ROLLOUTS}/arl-watched`)).status).toBe(200);
    const answer = await suite.api.admin('GET', `${ROLLOUTS}?watch=1&resourceVersion=${from}&timeoutSeconds=2`, {
      timeoutMs: 12_000,
    });
    const mine = watchEvents(answer).filter((event) => event.object.metadata?.name === 'arl-watched');
    expect(mine.map((event) => event.type)).toEqual(['ADDED', 'MODIFIED', 'MODIFIED', 'DELETED']);
    expect(mine.slice(0, 3).map((event) => rv(event.object))).toEqual([rv(created), rv(ran), rv(reported)]);
    expect(mine[2]?.object.status).toEqual({ phase: 'Progressing' });
  });
}

export function rolloutContract(suite: Suite): void {
  describe('AgentRollouts: defaults and the rules of a create', () => createCases(suite));
  describe('AgentRollouts: transition rules, generation and status', () => transitionCases(suite));
  describe('AgentRollouts: watch', () => watchCases(suite));
}
