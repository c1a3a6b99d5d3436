/**
 * The AgentRelease half of the conformance suite's custom-resource cases (kube-apiserver.contract.ts
 * registers it): create, the schema's refusals, the immutability transition rule, generation, the
 * status subresource with its resourceVersion preconditions, paging and delete, against the
 * shipped CRD. Asserts codes, Status reasons and causes and the stored state, never messages.
 */
import { describe, expect, it } from 'vitest';
import type { Suite } from './kube-apiserver.contract.js';
import { artifact, release, releaseSpec, RELEASES, type Stored, stored } from './kube-apiserver.objects.js';
import { causesOf, MERGE_PATCH, statusShape, warningsOf } from './kube-apiserver.support.js';

const NOT_CHECKED = 'FieldValueInvalid <nil>';
const INVALID = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Invalid', code: 422 };
const details = (name: string, kind = 'agentreleases') => ({ name, group: 'agent-upgrade.dev', kind });

async function create(suite: Suite, name: string, spec = releaseSpec()): Promise<Stored> {
  const answer = await suite.api.admin('POST', RELEASES, { body: release(name, spec) });
  expect(answer.status, answer.text).toBe(201);
  return stored(answer);
}

const patch = (suite: Suite, name: string, body: unknown, subresource = '') =>
  suite.api.admin('PATCH', `${RELEASES}/${name}${subresource}`, { body, contentType: MERGE_PATCH });

const current = async (suite: Suite, name: string): Promise<Stored> =>
  stored(await suite.api.admin('GET', `${RELEASES}/${name}`));

/** Creates the schema refuses, with the causes a client gets (sorted). */
const REFUSED: readonly [string, Record<string, unknown>, readonly string[]][] = [
  ['a version that is no semantic version', releaseSpec({ version: 'x1.4' }), ['FieldValueInvalid spec.version']],
  ['no artifacts', releaseSpec({ artifacts: [] }), ['FieldValueInvalid spec.artifacts']],
  [
    'an artifact twice',
    releaseSpec({ artifacts: [artifact(), artifact()] }),
    ['FieldValueDuplicate spec.artifacts[1]'],
  ],
  [
    'three artifacts, one with a bad URL and one with a bad digest',
    releaseSpec({
      artifacts: [
        artifact('amd64', { downloadURL: 'ftp://h/a' }),
        artifact('arm64', { sha256: 'zz' }),
        artifact('amd64'),
      ],
    }),
    [
      'FieldValueDuplicate spec.artifacts[2]',
      NOT_CHECKED,
      'FieldValueInvalid spec.artifacts[0].downloadURL',
      'FieldValueInvalid spec.artifacts[1].sha256',
      'FieldValueTooMany spec.artifacts',
    ],
  ],
  [
    'an unknown architecture',
    releaseSpec({ artifacts: [artifact('x86')] }),
    [NOT_CHECKED, 'FieldValueNotSupported spec.artifacts[0].arch'],
  ],
  ['no artifacts field', { version: '1.0.0' }, [NOT_CHECKED, 'FieldValueRequired spec.artifacts']],
  [
    'a quarantine without quarantined',
    releaseSpec({ quarantine: {} }),
    [NOT_CHECKED, 'FieldValueRequired spec.quarantine.quarantined'],
  ],
  [
    'a version over 64 characters',
    releaseSpec({ version: `1.0.0-${'a'.repeat(60)}` }),
    [NOT_CHECKED, 'FieldValueTooLong spec.version'],
  ],
];

function writeCases(suite: Suite): void {
  it('creates a release (201, generation 1, status dropped, unknown fields warned) and names it in AlreadyExists', async () => {
    const body = release('rel-create', releaseSpec({ bogus: 1 }), { status: { observedGeneration: 3 } });
    const created = await suite.api.admin('POST', RELEASES, { body });
    expect(created.status, created.text).toBe(201);
    expect({ generation: stored(created).metadata.generation, status: stored(created).status }).toEqual({
      generation: 1,
      status: undefined,
    });
    expect(stored(created).spec).toEqual(releaseSpec());
    expect(warningsOf(created)).toEqual(['unknown field "spec.bogus"']);
    const again = await suite.api.admin('POST', RELEASES, { body: release('rel-create', releaseSpec()) });
    expect(statusShape(again)).toMatchObject({ reason: 'AlreadyExists', code: 409, details: details('rel-create') });
  });

  it.each(REFUSED)('refuses a release with %s (422 naming each cause)', async (what, spec, causes) => {
    const name = `rel-refused-${what.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`.slice(0, 60).replace(/-$/, '');
    const answer = await suite.api.admin('POST', RELEASES, { body: release(name, spec) });
    expect(answer.status, answer.text).toBe(422);
    expect(statusShape(answer)).toEqual({ ...INVALID, details: details(name, 'AgentRelease') });
    expect(causesOf(answer)).toEqual(causes);
  });

  it('keeps a release immutable but for spec.quarantine (a transition rule), bumping generation on spec changes', async () => {
    await create(suite, 'rel-immutable');
    for (const spec of [{ version: '1.4.3' }, { artifacts: [artifact('amd64')] }]) {
      const refused = await patch(suite, 'rel-immutable', { spec });
      expect(refused.status, refused.text).toBe(422);
      expect(causesOf(refused)).toEqual(['FieldValueInvalid spec']);
    }
    const quarantined = await patch(suite, 'rel-immutable', {
      spec: { quarantine: { quarantined: true, reason: 'halted' } },
    });
    expect(quarantined.status, quarantined.text).toBe(200);
    expect(stored(quarantined).metadata.generation).toBe(2);
    // A map list compares by its keys in CEL: reordering the artifacts is no change to them.
    const reordered = await patch(suite, 'rel-immutable', {
      spec: { artifacts: [artifact('arm64'), artifact('amd64')] },
    });
    expect(reordered.status, reordered.text).toBe(200);
    const labelled = await patch(suite, 'rel-immutable', { metadata: { labels: { tier: 'blue' } } });
    expect(stored(labelled).metadata.generation).toBe(stored(reordered).metadata.generation);
  });

  it('answers a main-resource write based on a stale resourceVersion with 409 Conflict, PUT and PATCH alike', async () => {
    const created = await create(suite, 'rel-stale');
    const moved = await patch(suite, 'rel-stale', { metadata: { labels: { moved: 'yes' } } });
    expect(moved.status, moved.text).toBe(200);
    const stale = { resourceVersion: created.metadata.resourceVersion };
    const patched = await patch(suite, 'rel-stale', { metadata: stale, spec: { quarantine: { quarantined: true } } });
    expect(statusShape(patched)).toMatchObject({ reason: 'Conflict', code: 409, details: details('rel-stale') });
    const put = await suite.api.admin('PUT', `${RELEASES}/rel-stale`, {
      body: { ...created, metadata: { ...created.metadata } },
    });
    expect(statusShape(put)).toMatchObject({ reason: 'Conflict', code: 409 });
    const latest = await current(suite, 'rel-stale');
    const { resourceVersion: _rv, ...withoutVersion } = latest.metadata;
    const unconditional = await suite.api.admin('PUT', `${RELEASES}/rel-stale`, {
      body: { ...latest, metadata: withoutVersion },
    });
    expect(unconditional.status).toBe(422);
    expect(causesOf(unconditional)).toEqual(['FieldValueInvalid metadata.resourceVersion']);
    const replaced = await suite.api.admin('PUT', `${RELEASES}/rel-stale`, {
      body: { ...latest, spec: { ...latest.spec, quarantine: { quarantined: false } } },
    });
    expect(replaced.status, replaced.text).toBe(200);
    expect(stored(replaced).metadata.generation).toBe(2);
  });
}

function statusCases(suite: Suite): void {
  const condition = {
    type: 'Validated',
    status: 'True',
    reason: 'Checked',
    lastTransitionTime: '2024-01-01T00:00:00Z',
  };

  it('writes status by PUT with a resourceVersion precondition (409 when stale, 422 without), never spec or generation', async () => {
    const created = await create(suite, 'rel-status');
    const based = (resourceVersion?: string) => ({
      apiVersion: 'agent-upgrade.dev/v1alpha1',
      kind: 'AgentRelease',
      metadata: { name: 'rel-status', ...(resourceVersion === undefined ? {} : { resourceVersion }) },
      spec: releaseSpec({ version: '9.9.9' }),
      status: { observedGeneration: 1, conditions: [condition] },
    });
    const put = await suite.api.admin('PUT', `${RELEASES}/rel-status/status`, {
      body: based(created.metadata.resourceVersion),
    });
    expect(put.status, put.text).toBe(200);
    expect({ spec: stored(put).spec, generation: stored(put).metadata.generation }).toEqual({
      spec: releaseSpec(),
      generation: 1,
    });
    expect(stored(put).status).toEqual({ observedGeneration: 1, conditions: [condition] });
    const stale = await suite.api.admin('PUT', `${RELEASES}/rel-status/status`, {
      body: based(created.metadata.resourceVersion),
    });
    expect(statusShape(stale)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Conflict',
      code: 409,
      details: details('rel-status'),
    });
    const unconditional = await suite.api.admin('PUT', `${RELEASES}/rel-status/status`, { body: based() });
    expect(unconditional.status).toBe(422);
    expect(causesOf(unconditional)).toEqual(['FieldValueInvalid metadata.resourceVersion']);
    const read = await suite.api.admin('GET', `${RELEASES}/rel-status/status`);
    expect(stored(read).metadata.resourceVersion).toBe(stored(put).metadata.resourceVersion);
  });

  it('merge-patches status (refusing what the schema refuses) and ignores status written through the main resource', async () => {
    await create(suite, 'rel-status-patch');
    const patched = await patch(suite, 'rel-status-patch', { status: { observedGeneration: 1 } }, '/status');
    expect(patched.status, patched.text).toBe(200);
    const refused = await patch(
      suite,
      'rel-status-patch',
      { status: { conditions: [{ ...condition, type: 'Bogus' }] } },
      '/status',
    );
    expect(refused.status).toBe(422);
    expect(causesOf(refused)).toEqual([NOT_CHECKED, 'FieldValueNotSupported status.conditions[0].type']);
    const main = await patch(suite, 'rel-status-patch', {
      status: { observedGeneration: 7 },
      metadata: { labels: { a: 'b' } },
    });
    expect(main.status, main.text).toBe(200);
    expect(stored(main).status).toEqual({ observedGeneration: 1 });
  });
}

function readCases(suite: Suite): void {
  it('lists releases in pages with continue, then deletes one (200, then 404 naming it)', async () => {
    for (const name of ['rel-page-a', 'rel-page-b', 'rel-page-c']) await create(suite, name);
    const selector = 'labelSelector=page%3Dyes';
    for (const name of ['rel-page-a', 'rel-page-b', 'rel-page-c'])
      expect((await patch(suite, name, { metadata: { labels: { page: 'yes' } } })).status).toBe(200);
    const first = await suite.api.admin('GET', `${RELEASES}?${selector}&limit=2`);
    const page = first.json as { items: Stored[]; metadata: { continue?: string; resourceVersion: string } };
    expect(page.items.map((item) => item.metadata.name)).toEqual(['rel-page-a', 'rel-page-b']);
    const next = await suite.api.admin(
      'GET',
      `${RELEASES}?${selector}&limit=2&continue=${encodeURIComponent(page.metadata.continue ?? '')}`,
    );
    const rest = next.json as { items: Stored[]; metadata: { continue?: string; resourceVersion: string } };
    expect(rest.items.map((item) => item.metadata.name)).toEqual(['rel-page-c']);
    expect(rest.metadata.continue ?? '').toBe('');
    expect(rest.metadata.resourceVersion).toBe(page.metadata.resourceVersion);
    expect((await suite.api.admin('DELETE', `${RELEASES}/rel-page-c`)).status).toBe(200);
    const gone = await suite.api.admin('GET', `${RELEASES}/rel-page-c`);
    expect(statusShape(gone)).toMatchObject({ reason: 'NotFound', code: 404, details: details('rel-page-c') });
  });
}

export function releaseContract(suite: Suite): void {
  describe('AgentReleases: create, schema, immutability, conflicts', () => writeCases(suite));
  describe('AgentReleases: the status subresource', () => statusCases(suite));
  describe('AgentReleases: paging and delete', () => readCases(suite));
}
