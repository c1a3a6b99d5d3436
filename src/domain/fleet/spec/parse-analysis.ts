import { parseDownloadUrl } from '../../common/url-policy.js';
import { parseCondition } from './analysis-condition.js';
import type { AnalysisMetricSpec, AnalysisSpec } from './rollout-spec.js';
import {
  checkKnownFields,
  isDnsLabel,
  isRecord,
  objectField,
  stringField,
  type Json,
  type ProblemList,
} from './spec-problems.js';
import { parseDuration } from './time-text.js';

/**
 * An `analysis` section (a wave's, or the rollout's for every wave without one): the Prometheus
 * queries that must hold while the wave bakes. Every problem has the code E_ROLLOUT_ANALYSIS,
 * but a success condition outside the grammar (analysis-condition.ts), which is
 * E_ROLLOUT_CONDITION.
 */

export const ANALYSIS_METRICS_MAX = 8;
export const ANALYSIS_COUNT_MAX = 100;
export const QUERY_MAX_LENGTH = 4096;
const INTERVAL_MIN_MS = 1_000;
const INTERVAL_MAX_MS = 24 * 3_600_000;
const DEFAULT_INTERVAL_MS = 60_000;
const DEFAULT_CONSECUTIVE_ERROR_LIMIT = 4;
const METRIC_FIELDS = [
  'name',
  'prometheus',
  'successCondition',
  'interval',
  'count',
  'failureLimit',
  'consecutiveErrorLimit',
];

export function parseAnalysis(object: Json, path: string, problems: ProblemList): AnalysisSpec | null {
  const analysis = objectField(object, 'analysis', path, problems);
  if (analysis === null) return null;
  const at = `${path}.analysis`;
  checkKnownFields(analysis, ['metrics'], at, problems);
  const raw = analysis['metrics'];
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > ANALYSIS_METRICS_MAX) {
    problems.add('E_ROLLOUT_ANALYSIS', `${at}.metrics`, `must list 1 to ${ANALYSIS_METRICS_MAX} metrics`);
    return null;
  }
  const metrics = raw.flatMap((entry: unknown, index) => parseMetric(entry, `${at}.metrics[${index}]`, problems));
  const names = metrics.map((metric) => metric.name);
  names.forEach((name, index) => {
    if (names.indexOf(name) !== index)
      problems.add('E_ROLLOUT_ANALYSIS', `${at}.metrics[${index}].name`, `"${name}" is used twice`);
  });
  return { metrics };
}

function parseMetric(raw: unknown, path: string, problems: ProblemList): AnalysisMetricSpec[] {
  if (!isRecord(raw)) {
    problems.add('E_ROLLOUT_ANALYSIS', path, 'must be an object');
    return [];
  }
  checkKnownFields(raw, METRIC_FIELDS, path, problems);
  const name = raw['name'];
  if (typeof name !== 'string' || !isDnsLabel(name))
    problems.add('E_ROLLOUT_ANALYSIS', `${path}.name`, 'must be a DNS label (a-z, 0-9, -; at most 63)');
  const { address, query } = parseProvider(raw, path, problems);
  const text = stringField(raw, 'successCondition', path, problems, 'E_ROLLOUT_CONDITION');
  const parsed = parseCondition(text ?? '');
  if (!parsed.ok) problems.add('E_ROLLOUT_CONDITION', `${path}.successCondition`, parsed.why);
  const count = wholeNumber(raw, 'count', path, problems, 1, ANALYSIS_COUNT_MAX) ?? 1;
  const failureLimit = wholeNumber(raw, 'failureLimit', path, problems, 0, ANALYSIS_COUNT_MAX) ?? 0;
  const consecutiveErrorLimit =
    wholeNumber(raw, 'consecutiveErrorLimit', path, problems, 0, ANALYSIS_COUNT_MAX) ?? DEFAULT_CONSECUTIVE_ERROR_LIMIT;
  return [
    {
      name: typeof name === 'string' ? name : '',
      address,
      query,
      successCondition: text ?? '',
      condition: parsed.ok ? parsed.condition : { kind: 'compare', left: LENGTH, op: '<', right: LENGTH },
      intervalMs: parseInterval(raw, path, problems),
      count,
      failureLimit,
      consecutiveErrorLimit,
    },
  ];
}

const LENGTH = { kind: 'length' } as const;

/** `prometheus: {address, query}`: an http(s) base URL without credentials, and a query. */
function parseProvider(raw: Json, path: string, problems: ProblemList): { address: string; query: string } {
  const provider = objectField(raw, 'prometheus', path, problems);
  const at = `${path}.prometheus`;
  if (provider === null) {
    problems.add('E_ROLLOUT_ANALYSIS', at, 'is required: {address, query}');
    return { address: '', query: '' };
  }
  checkKnownFields(provider, ['address', 'query'], at, problems);
  const address = stringField(provider, 'address', at, problems, 'E_ROLLOUT_ANALYSIS') ?? '';
  const url = parseDownloadUrl(address, { allowHttp: true, requireDigest: false }, true);
  if (!url.ok || /[?#]/.test(address))
    problems.add(
      'E_ROLLOUT_ANALYSIS',
      `${at}.address`,
      'must be an http or https URL with a host, no query or credentials',
    );
  const query = stringField(provider, 'query', at, problems, 'E_ROLLOUT_ANALYSIS') ?? '';
  if (query.trim() === '' || query.length > QUERY_MAX_LENGTH)
    problems.add('E_ROLLOUT_ANALYSIS', `${at}.query`, `must be 1 to ${QUERY_MAX_LENGTH} characters`);
  return { address, query };
}

function parseInterval(raw: Json, path: string, problems: ProblemList): number {
  const text = stringField(raw, 'interval', path, problems, 'E_ROLLOUT_ANALYSIS');
  if (text === null) return DEFAULT_INTERVAL_MS;
  const ms = parseDuration(text);
  if (ms === null || ms < INTERVAL_MIN_MS || ms > INTERVAL_MAX_MS) {
    problems.add('E_ROLLOUT_ANALYSIS', `${path}.interval`, 'must be a duration from 1s to 24h');
    return DEFAULT_INTERVAL_MS;
  }
  return ms;
}

function wholeNumber(
  raw: Json,
  key: string,
  path: string,
  problems: ProblemList,
  min: number,
  max: number,
): number | null {
  const value = raw[key];
  if (value === undefined) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    problems.add('E_ROLLOUT_ANALYSIS', `${path}.${key}`, `must be a whole number from ${min} to ${max}`);
    return null;
  }
  return value;
}
