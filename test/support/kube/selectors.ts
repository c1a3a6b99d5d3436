// fieldSelector / labelSelector parsing as kube-apiserver does it for a cluster-scoped custom
// resource: a field selector may only name metadata.name and the CRD's selectableFields (not
// metadata.namespace: the resource has none), and any other field is a 400 "field label not
// supported" — which is exactly what a server without the `selectableFields` entry (before 1.30,
// or 1.30 with the feature gate off) answers for spec.machineRef.

import { selectableValue } from './crd.js';
import type { JsonObject } from './json.js';
import { fail } from './status.js';
import type { MachineOperation } from './types.js';

type Op = '=' | '!=';
interface Requirement {
  readonly key: string;
  readonly op: Op;
  readonly value: string;
}

export type Selector = (op: MachineOperation) => boolean;
const everything: Selector = () => true;

function splitTerms(raw: string): string[] {
  return raw
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
}

function parseTerm(term: string, kind: 'field' | 'label'): Requirement {
  const match = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
  if (match === null) throw fail(400, `unable to parse requirement: invalid ${kind} selector: '${term}'`);
  const [, key = '', op = '=', value = ''] = match;
  return { key, op: op === '!=' ? '!=' : '=', value: value.trim() };
}

function fieldValue(op: MachineOperation, key: string): string {
  return key === 'metadata.name' ? op.metadata.name : selectableValue(op as unknown as JsonObject, key);
}

/** `selectableFields`: the CRD's, as field paths (`spec.machineRef`). */
export function parseFieldSelector(raw: string | undefined, selectableFields: readonly string[]): Selector {
  if (raw === undefined || raw.trim() === '') return everything;
  const requirements = splitTerms(raw).map((t) => parseTerm(t, 'field'));
  const supported = new Set(['metadata.name', ...selectableFields]);
  for (const r of requirements) {
    if (!supported.has(r.key)) throw fail(400, `field label not supported: ${r.key}`);
  }
  return (op) => requirements.every((r) => (fieldValue(op, r.key) === r.value) === (r.op === '='));
}

/** Equality-based terms (`k=v`, `k==v`, `k!=v`) and existence (`k`, `!k`); set-based terms are a 400. */
export function parseLabelSelector(raw: string | undefined): Selector {
  if (raw === undefined || raw.trim() === '') return everything;
  const tests = splitTerms(raw).map((term): Selector => {
    if (/^!?[A-Za-z0-9._/-]+$/.test(term)) {
      const negate = term.startsWith('!');
      const key = negate ? term.slice(1) : term;
      return (op) => (op.metadata.labels?.[key] !== undefined) !== negate;
    }
    if (/\s(in|notin)\s/.test(term))
      throw fail(400, `the fake API server does not support set-based label selectors: '${term}'`);
    const r = parseTerm(term, 'label');
    return (op) => (op.metadata.labels?.[r.key] === r.value) === (r.op === '=');
  });
  return (op) => tests.every((t) => t(op));
}
