// The rollout controller's manifests in deploy/ (the AgentRelease and AgentRollout CRDs and the
// controller's RBAC) and their examples in deploy/examples/, loaded once for the tests that check
// them (deploy-rollout-*.test.ts), with the CRDs' CEL rules each paired with a hand-written twin.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { jsonEqual } from '../../../src/domain/fleet/status/json-equal.js';
import { validate, withDefaults, type Json, type Rule, type Schema } from './crd-schema.js';

export const DEPLOY = join(import.meta.dirname, '../../../deploy');
export const EXAMPLES = join(DEPLOY, 'examples');

/** A YAML document, untyped on purpose (`any`): each test reads the fields it checks. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Doc = { [key: string]: any };
const load = (path: string): Doc[] => loadAll(readFileSync(path, 'utf8')) as Doc[];
export const [releaseCrd] = load(join(DEPLOY, 'agentrelease-crd.yaml')) as [Doc];
export const [rolloutCrd] = load(join(DEPLOY, 'agentrollout-crd.yaml')) as [Doc];
export const rbac = load(join(DEPLOY, 'agent-upgrade-controller-rbac.yaml'));
export const releaseExamples = load(join(EXAMPLES, 'agent-release.yaml'));
export const [rolloutExample] = load(join(EXAMPLES, 'agent-rollout.yaml')) as [Doc];
const schemaOf = (crd: Doc): Schema => crd['spec'].versions[0].schema.openAPIV3Schema as Schema;
export const RELEASE = schemaOf(releaseCrd);
export const ROLLOUT = schemaOf(rolloutCrd);

const PERCENT = /^(100|[1-9]?[0-9])%$/;
/** Every CEL rule of the two CRDs, and what it means. */
export const RULES = new Map<string, Rule>([
  [
    'self.version == oldSelf.version && self.artifacts == oldSelf.artifacts',
    (s, o) => s.version === o.version && jsonEqual(s.artifacts, o.artifacts),
  ],
  ['size(self.metadata.name) <= 63', (s) => [...String(s.metadata?.name ?? '')].length <= 63],
  [
    "self.strategy.onFailure == 'Halt' || has(self.rollback)",
    (s) => s.strategy.onFailure === 'Halt' || s.rollback !== undefined,
  ],
  ["self.state != 'RollBack' || has(self.rollback)", (s) => s.state !== 'RollBack' || s.rollback !== undefined],
  [
    '!has(self.rollback) || self.rollback.releaseRef.name != self.releaseRef.name',
    (s) => s.rollback === undefined || s.rollback.releaseRef.name !== s.releaseRef.name,
  ],
  [
    "oldSelf.state == 'Preview' || self.releaseRef.name == oldSelf.releaseRef.name",
    (s, o) => o.state === 'Preview' || s.releaseRef.name === o.releaseRef.name,
  ],
  ["oldSelf.state == 'Preview' || self.state != 'Preview'", (s, o) => o.state === 'Preview' || s.state !== 'Preview'],
  [
    "oldSelf.state != 'RollBack' || self.state == 'RollBack' || self.state == 'Abort'",
    (s, o) => o.state !== 'RollBack' || ['RollBack', 'Abort'].includes(s.state),
  ],
  [
    "oldSelf.state != 'Abort' || self.state == 'Abort' || self.state == 'RollBack'",
    (s, o) => o.state !== 'Abort' || ['Abort', 'RollBack'].includes(s.state),
  ],
  [
    "oldSelf.state != 'RollBack' || self.rollback.releaseRef.name == oldSelf.rollback.releaseRef.name",
    (s, o) => o.state !== 'RollBack' || s.rollback?.releaseRef.name === o.rollback?.releaseRef.name,
  ],
  ['self.all(w, self.exists_one(x, x.name == w.name))', (s) => new Set(s.map((w: Doc) => w['name'])).size === s.length],
  ['self.all(m, self.exists_one(x, x.name == m.name))', (s) => new Set(s.map((m: Doc) => m['name'])).size === s.length],
  ['has(self[size(self) - 1].percent) && self[size(self) - 1].percent == 100', (s) => s[s.length - 1]?.percent === 100],
  ['has(self.count) != has(self.percent)', (s) => 'count' in s !== 'percent' in s],
  [
    "type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",
    (s) => (typeof s === 'number' ? s >= 0 : PERCENT.test(s)),
  ],
]);

export function rulesIn(schema: unknown): string[] {
  if (Array.isArray(schema)) return schema.flatMap(rulesIn);
  if (typeof schema !== 'object' || schema === null) return [];
  const own = ((schema as Doc)['x-kubernetes-validations'] ?? []).map((entry: Doc) => entry['rule'] as string);
  return [...own, ...Object.values(schema).flatMap(rulesIn)];
}

export const check = (doc: Doc, schema: Schema, old?: Doc): string[] =>
  validate(
    withDefaults(doc as Json, schema) as Json,
    schema,
    RULES,
    old === undefined ? undefined : (withDefaults(old as Json, schema) as Json),
  );
export const edit = (doc: Doc, change: (copy: Doc) => void): Doc => {
  const copy = structuredClone(doc);
  change(copy);
  return copy;
};
