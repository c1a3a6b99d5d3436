// fieldSelector / labelSelector parsing as kube-apiserver does it: a field selector may only name
// metadata.name, metadata.namespace (namespaced resources only) and the resource's selectable
// fields, and any other field is a 400 "field label not supported" — which is exactly what a
// server without the MachineOperation CRD's `selectableFields` entry (before 1.30, or 1.30 with
// the feature gate off) answers for spec.machineRef. Label selectors take equality (`k=v`,
// `k==v`, `k!=v`), set (`k in (a,b)`, `k notin (a)`) and existence (`k`, `!k`) terms.

import { selectableValue } from './crd.js';
import type { JsonObject } from './json.js';
import { fail } from './status.js';
import type { StoredObject } from './types.js';

type Op = '=' | '!=';
interface Requirement {
  readonly key: string;
  readonly op: Op;
  readonly value: string;
}

export type Selector = (object: StoredObject) => boolean;
export const everything: Selector = () => true;

const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Splits on the commas that are not inside a set term's parentheses. */
function splitTerms(raw: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let index = 0; index < raw.length; index += 1) {
    const char = raw[index];
    if (char === '(') depth += 1;
    else if (char === ')') depth -= 1;
    else if (char === ',' && depth === 0) {
      terms.push(raw.slice(start, index));
      start = index + 1;
    }
  }
  terms.push(raw.slice(start));
  return terms.map((t) => t.trim()).filter((t) => t !== '');
}

function parseTerm(term: string, kind: 'field' | 'label'): Requirement {
  const match = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(term);
  if (match === null) throw fail(400, `unable to parse requirement: invalid ${kind} selector: '${term}'`);
  const [, key = '', op = '=', value = ''] = match;
  return { key, op: op === '!=' ? '!=' : '=', value: value.trim() };
}

function fieldValue(object: StoredObject, key: string): string {
  if (key === 'metadata.name') return object.metadata.name;
  if (key === 'metadata.namespace') return object.metadata.namespace ?? '';
  return selectableValue(object as unknown as JsonObject, key);
}

/** `selectableFields`: the resource's, as field paths (`spec.machineRef`). */
export function parseFieldSelector(
  raw: string | undefined,
  selectableFields: readonly string[],
  namespaced = false,
): Selector {
  if (raw === undefined || raw.trim() === '') return everything;
  const requirements = splitTerms(raw).map((t) => parseTerm(t, 'field'));
  const supported = new Set(['metadata.name', ...(namespaced ? ['metadata.namespace'] : []), ...selectableFields]);
  for (const r of requirements) {
    if (!supported.has(r.key)) throw fail(400, `field label not supported: ${r.key}`);
  }
  return (object) => requirements.every((r) => (fieldValue(object, r.key) === r.value) === (r.op === '='));
}

function labelKey(key: string, term: string): string {
  if (!LABEL_KEY.test(key) || key.length > 317)
    throw fail(400, `unable to parse requirement: invalid label key in '${term}'`);
  return key;
}

function labelValue(value: string, term: string): string {
  if (!LABEL_VALUE.test(value) || value.length > 63)
    throw fail(400, `unable to parse requirement: invalid label value in '${term}'`);
  return value;
}

function setTerm(term: string): Selector | undefined {
  const match = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
  if (match === null) return undefined;
  const [, rawKey = '', op, list = ''] = match;
  const key = labelKey(rawKey, term);
  const values = new Set(list.split(',').map((v) => labelValue(v.trim(), term)));
  const member = (object: StoredObject): boolean => {
    const value = object.metadata.labels?.[key];
    return value !== undefined && values.has(value);
  };
  return op === 'in' ? member : (object) => !member(object);
}

function labelTerm(term: string): Selector {
  const existence = /^(!?)\s*([^\s=!(),]+)$/.exec(term);
  if (existence !== null) {
    const key = labelKey(existence[2] ?? '', term);
    const negate = existence[1] === '!';
    return (object) => (object.metadata.labels?.[key] !== undefined) !== negate;
  }
  const set = setTerm(term);
  if (set !== undefined) return set;
  if (/^\S+\s*[<>]/.test(term))
    throw fail(400, `the fake API server does not support the numeric label selector '${term}'`);
  const r = parseTerm(term, 'label');
  const key = labelKey(r.key, term);
  const value = labelValue(r.value, term);
  return (object) => (object.metadata.labels?.[key] === value) === (r.op === '=');
}

export function parseLabelSelector(raw: string | undefined): Selector {
  if (raw === undefined || raw.trim() === '') return everything;
  const tests = splitTerms(raw).map(labelTerm);
  return (object) => tests.every((t) => t(object));
}
