// What test/deploy/monitoring.test.ts needs to hold the shipped dashboard and alerts to the
// controller: the metrics the real adapter exports, a reader of the PromQL they are written in,
// the anchors of a markdown file, and promtool.

import { execFile } from 'node:child_process';
import { PrometheusMetrics } from '../../src/adapters/fleet/metrics/prometheus-metrics.js';
import type { AgentRolloutStatus } from '../../src/domain/fleet/status/rollout-status.js';

export const PROMTOOL = '/usr/bin/promtool';

/** Labels Prometheus attaches to every scraped series: not the controller's, but always there. */
const TARGET_LABELS: readonly string[] = ['instance'];

/** Labels whose every value the exercise below makes the adapter export: a matcher must use one of them. */
const CLOSED_LABELS: readonly string[] = ['phase', 'state', 'outcome'];

export interface MetricFamily {
  readonly type: string;
  /** How many samples the exercise produced: none means the exercise misses a method. */
  readonly samples: number;
  readonly labels: ReadonlySet<string>;
  /** The values each label showed in the exercise. */
  readonly values: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * The metric families of the real adapter, each with its labels, read from its own exposition
 * after every method of the ControllerMetrics port was called once, so that every family has
 * series. The adapter keeps a registry of its own, a fresh one per instance.
 */
export async function exportedMetrics(): Promise<Map<string, MetricFamily>> {
  const errors: unknown[] = [];
  const metrics = new PrometheusMetrics({ onError: (error) => errors.push(error) });
  const status: AgentRolloutStatus = {
    observedGeneration: 1,
    phase: 'Halted',
    progress: '0/1',
    counts: {
      targets: 1,
      excluded: { optedOut: 0, alreadyAtTarget: 0, conflict: 0, vanished: 0, noArtifact: 0 },
      pending: 0,
      inFlight: 0,
      succeeded: 0,
      failed: 0,
      timedOut: 1,
      lost: 0,
      rolledBack: 0,
    },
    waves: [],
    failures: { sample: [], byReason: { NotStarted: 1 }, byLabel: {} },
    conditions: [],
  };
  metrics.rolloutObserved('fleet-a', status);
  metrics.halted('fleet-a', 'OperationsStalled');
  for (const outcome of ['applied', 'conflict', 'error'] as const) metrics.reconciled(5, outcome);
  metrics.apiRequest({ verb: 'list', resource: 'nodes', code: 200 });
  metrics.apiRequest({ verb: 'create', resource: 'machineoperations', code: null });
  metrics.leading(true);
  metrics.trustMetadataObserved([{ role: 'timestamp', expiresMs: 1_700_000_000_000, expiringSoon: true }]);
  if (errors.length > 0) throw new Error(`the adapter refused the exercise: ${errors.map(String).join('; ')}`);
  return familiesOf(await metrics.render());
}

function familiesOf(exposition: string): Map<string, MetricFamily> {
  const types = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(match[1] ?? '', match[2] ?? '');
  const families = new Map<
    string,
    { type: string; samples: number; labels: Set<string>; values: Map<string, Set<string>> }
  >();
  for (const [name, type] of types) families.set(name, { type, samples: 0, labels: new Set(), values: new Map() });
  for (const match of exposition.matchAll(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? \S+$/gm)) {
    const family = families.get(match[1] ?? '') ?? families.get((match[1] ?? '').replace(/_(bucket|sum|count)$/, ''));
    if (family === undefined) throw new Error(`a sample of no family: ${match[0]}`);
    family.samples += 1;
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      const [label = '', value = ''] = [pair[1], pair[2]];
      if (label === 'le') continue;
      family.labels.add(label);
      family.values.set(label, (family.values.get(label) ?? new Set()).add(value));
    }
  }
  return families;
}

interface Token {
  readonly kind: 'space' | 'string' | 'range' | 'variable' | 'number' | 'ident' | 'punct';
  readonly text: string;
}

const TOKEN_KINDS: readonly Token['kind'][] = ['space', 'string', 'range', 'variable', 'number', 'ident', 'punct'];
const TOKEN =
  /(\s+)|("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)|(\[[^\]]*\])|(\$\{[^}]*\}|\$\w+)|(\.?\d[\w.]*)|([a-zA-Z_:][\w:]*)|(=~|!~|!=|==|<=|>=|[(){},=<>+\-*/%^])/y;

/** PromQL as tokens, blanks dropped; ranges and subqueries (`[5m]`, `[$__rate_interval]`) are one token each. */
function tokenize(expr: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(expr);
    if (match === null) throw new Error(`unreadable PromQL at ${at}: ${expr.slice(at, at + 20)}`);
    const kind = TOKEN_KINDS[match.slice(1).findIndex((group) => group !== undefined)];
    if (kind !== undefined && kind !== 'space') tokens.push({ kind, text: match[0] });
  }
  return tokens;
}

/** For each `(` and `{`, the index of the token that closes it. */
function closers(tokens: readonly Token[]): Map<number, number> {
  const open: number[] = [];
  const closing = new Map<number, number>();
  tokens.forEach((token, index) => {
    if (token.text === '(' || token.text === '{') open.push(index);
    if (token.text !== ')' && token.text !== '}') return;
    const opener = open.pop();
    if (opener === undefined || tokens[opener]?.text !== (token.text === ')' ? '(' : '{'))
      throw new Error(`unbalanced ${token.text}`);
    closing.set(opener, index);
  });
  if (open.length > 0) throw new Error('unclosed bracket');
  return closing;
}

const AGGREGATIONS = new Set(['sum', 'min', 'max', 'avg', 'count', 'group', 'stddev', 'stdvar', 'topk', 'bottomk']);
const FUNCTIONS = new Set(['rate', 'irate', 'increase', 'delta', 'histogram_quantile', 'absent', 'time', 'vector']);
const MODIFIERS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

interface Matcher {
  readonly label: string;
  readonly op: string;
  readonly value: string;
}
interface Selector {
  readonly at: number;
  readonly name: string;
  readonly matchers: readonly Matcher[];
}
interface LabelList {
  readonly at: number;
  readonly keyword: string;
  readonly labels: readonly string[];
}

/** The selectors, the label lists of by/without/on/…, the aggregations and the functions of one expression. */
function read(tokens: readonly Token[], closing: ReadonlyMap<number, number>) {
  const selectors: Selector[] = [];
  const lists: LabelList[] = [];
  const aggregations: number[] = [];
  const problems: string[] = [];
  const inside = (from: number, to: number): Token[] => tokens.slice(from + 1, to);
  for (let at = 0; at < tokens.length; at++) {
    const { kind, text } = tokens[at] ?? { kind: 'punct', text: '' };
    const next = tokens[at + 1]?.text;
    if (kind === 'punct' && text === '{') {
      problems.push('a selector without a metric name');
      at = closing.get(at) ?? at;
    }
    if (kind !== 'ident' || KEYWORDS.has(text.toLowerCase())) continue;
    if (MODIFIERS.has(text)) {
      const end = next === '(' ? (closing.get(at + 1) ?? at) : at;
      const labels = inside(at + 1, end).filter((token) => token.kind === 'ident');
      lists.push({ at, keyword: text, labels: labels.map((token) => token.text) });
      at = end;
    } else if (AGGREGATIONS.has(text) && (next === '(' || MODIFIERS.has(next ?? ''))) aggregations.push(at);
    else if (next === '(') {
      if (!FUNCTIONS.has(text)) problems.push(`an unknown function ${text}`);
    } else {
      const end = next === '{' ? (closing.get(at + 1) ?? at) : at;
      const body = inside(at + 1, end);
      const matchers = body.flatMap((token, index) =>
        token.kind === 'ident' && /^(=|!=|=~|!~)$/.test(body[index + 1]?.text ?? '')
          ? [{ label: token.text, op: body[index + 1]?.text ?? '', value: (body[index + 2]?.text ?? '').slice(1, -1) }]
          : [],
      );
      selectors.push({ at, name: text, matchers });
      at = end;
    }
  }
  return { selectors, lists, aggregations, problems };
}

/** The labels a selector of `name` can carry, or why it names no series the controller exports. */
function labelsOf(name: string, exported: ReadonlyMap<string, MetricFamily>): ReadonlySet<string> | string {
  const family = exported.get(name);
  if (family !== undefined)
    return family.type === 'histogram'
      ? `${name} is a histogram: only its _bucket, _sum and _count are series`
      : family.labels;
  const suffix = /_(bucket|sum|count)$/.exec(name);
  const base = exported.get(name.slice(0, suffix?.index ?? name.length));
  if (suffix === null || base?.type !== 'histogram') return `${name} is not a metric the controller exports`;
  return suffix[1] === 'bucket' ? new Set([...base.labels, 'le']) : base.labels;
}

/** Where `expr` uses a metric, a label or a label value the controller does not export, or a function unknown here. */
export function promqlProblems(expr: string, exported: ReadonlyMap<string, MetricFamily>): string[] {
  const tokens = tokenize(expr);
  const closing = closers(tokens);
  const { selectors, lists, aggregations, problems } = read(tokens, closing);
  const known = new Map(selectors.map((selector) => [selector, labelsOf(selector.name, exported)]));
  const allowed = (scope: readonly Selector[]): Set<string> =>
    new Set([...TARGET_LABELS, ...scope.flatMap((selector) => [...asSet(known.get(selector))])]);
  for (const selector of selectors) {
    const labels = known.get(selector);
    if (typeof labels === 'string') problems.push(labels);
    for (const { label, op, value } of selector.matchers) {
      if (!allowed([selector]).has(label)) problems.push(`${selector.name} has no label ${label}`);
      const values = exported.get(selector.name.replace(/_(bucket|sum|count)$/, ''))?.values.get(label);
      if (op === '=' && CLOSED_LABELS.includes(label) && values?.has(value) !== true)
        problems.push(`${selector.name} never has ${label}="${value}"`);
    }
  }
  for (const list of lists) {
    const scope = scopeOf(list, aggregations, closing, tokens.length);
    const inScope = selectors.filter((selector) => selector.at > scope.from && selector.at < scope.to);
    for (const label of list.labels)
      if (!allowed(inScope).has(label)) problems.push(`${list.keyword} (${label}): no selector in its scope has it`);
  }
  return problems;
}

function asSet(labels: ReadonlySet<string> | string | undefined): ReadonlySet<string> {
  return typeof labels === 'string' || labels === undefined ? new Set() : labels;
}

/**
 * The tokens a label list speaks of: for the by/without of an aggregation, the aggregation's
 * argument (the clause comes right after the aggregation's name or right after its argument);
 * for on/ignoring/group_*, the whole expression.
 */
function scopeOf(
  list: LabelList,
  aggregations: readonly number[],
  closing: ReadonlyMap<number, number>,
  length: number,
): { from: number; to: number } {
  if (list.keyword === 'by' || list.keyword === 'without') {
    for (const at of aggregations) {
      const open = at + 1 === list.at ? (closing.get(at + 2) ?? at) + 1 : at + 1;
      const close = closing.get(open) ?? open;
      if (at + 1 === list.at || close + 1 === list.at) return { from: open, to: close };
    }
    throw new Error(`${list.keyword} belongs to no aggregation`);
  }
  return { from: -1, to: length };
}

/** GitHub's heading anchors of a markdown file, fenced code left out. */
export function headingAnchors(markdown: string): Set<string> {
  const prose = markdown.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '');
  return new Set(
    [...prose.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*$/gm)].map((match) =>
      (match[1] ?? '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N}_ -]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * promtool with `args` in `cwd`, killed after 20 s so a hang fails inside the test's own timeout
 * with what it printed; a missing promtool is a run that failed (code null), never a skip.
 */
export function promtool(args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(PROMTOOL, args, { cwd, timeout: 20_000 }, (error, stdout, stderr) =>
      resolve({
        code: error === null ? 0 : typeof error.code === 'number' ? error.code : null,
        stdout,
        stderr: error !== null && stderr === '' ? String(error) : stderr,
      }),
    );
  });
}
