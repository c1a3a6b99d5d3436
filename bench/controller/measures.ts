/**
 * What the controller benchmark reads off its subjects: the fake API server's request log sorted
 * by who sent it and by verb, and the reconcile histogram of the controller's /metrics.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeRequest } from '../../test/support/kube/fake-apiserver.js';

export const VERBS = ['list', 'watch', 'get', 'create', 'update', 'patch', 'delete'] as const;
export type Verb = (typeof VERBS)[number];

export interface Tally {
  /** Requests by verb, the Lease's aside. */
  readonly byVerb: Record<Verb, number>;
  /** The same, by `verb resource` (resource: the path's collection, `…/status` for the subresource). */
  readonly byVerbAndResource: Record<string, number>;
  /** Leader election: requests on the Lease, by verb. */
  readonly lease: Record<string, number>;
}

const empty = (): Record<Verb, number> => Object.fromEntries(VERBS.map((verb) => [verb, 0])) as Record<Verb, number>;

/** The collection a path names (`nodes`, `machineoperations/status`, `events`, …) and whether it names one object. */
export function parsePath(path: string): { readonly resource: string; readonly named: boolean } {
  const parts = path.split('/').filter((part) => part !== '');
  // /api/v1/<resource>[/<name>[/<sub>]], /apis/<group>/<version>/<resource>…, and the namespaced forms.
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  const [resource = '', name, sub] = rest;
  return { resource: sub === undefined ? resource : `${resource}/${sub}`, named: name !== undefined };
}

export function verbOf(request: KubeRequest): Verb {
  switch (request.method) {
    case 'GET':
      if (request.query['watch'] === 'true' || request.query['watch'] === '1') return 'watch';
      return parsePath(request.path).named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    default:
      return 'delete';
  }
}

export function tally(requests: readonly KubeRequest[], token: string): Tally {
  const byVerb = empty();
  const byVerbAndResource: Record<string, number> = {};
  const lease: Record<string, number> = {};
  for (const request of requests) {
    if (request.headers.authorization !== `Bearer ${token}`) continue;
    const verb = verbOf(request);
    const { resource } = parsePath(request.path);
    if (resource.startsWith('leases')) {
      lease[verb] = (lease[verb] ?? 0) + 1;
      continue;
    }
    byVerb[verb] += 1;
    const key = `${verb} ${resource}`;
    byVerbAndResource[key] = (byVerbAndResource[key] ?? 0) + 1;
  }
  return { byVerb, byVerbAndResource, lease };
}

export interface HistogramSummary {
  readonly count: number;
  readonly sumSeconds: number;
  readonly meanMs: number;
  /** Estimated from the buckets, interpolated linearly within one (as histogram_quantile does). */
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly maxBucketMs: number;
}

/** A histogram's cumulative buckets (upper bound in seconds → count), sum and count. */
export interface Histogram {
  readonly buckets: ReadonlyMap<number, number>;
  readonly sum: number;
  readonly count: number;
}

/** `name` of a Prometheus text exposition, every label set summed. */
export function parseHistogram(text: string, name: string): Histogram {
  const buckets = new Map<number, number>();
  let count = 0;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith(`${name}_bucket{`)) {
      const le = /le="([^"]+)"/.exec(line)?.[1] ?? '+Inf';
      const bound = le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    } else if (line.startsWith(`${name}_sum`)) sum += value;
    else if (line.startsWith(`${name}_count`)) count += value;
  }
  return { buckets, sum, count };
}

/** What was observed between two readings of the same histogram. */
export function since(later: Histogram, earlier: Histogram): Histogram {
  const buckets = new Map<number, number>();
  for (const [bound, cumulative] of later.buckets) buckets.set(bound, cumulative - (earlier.buckets.get(bound) ?? 0));
  return { buckets, sum: later.sum - earlier.sum, count: later.count - earlier.count };
}

export function summarize({ buckets, sum, count }: Histogram): HistogramSummary {
  const sorted = [...buckets].sort(([a], [b]) => a - b);
  const quantile = (q: number): number => {
    if (count === 0) return 0;
    const rank = q * count;
    let lower = 0;
    let below = 0;
    for (const [bound, cumulative] of sorted) {
      if (cumulative >= rank) {
        // The open top bucket has no upper edge: its lower edge is the estimate, as Prometheus says.
        if (!Number.isFinite(bound)) return lower * 1000;
        const inBucket = cumulative - below;
        return (lower + (bound - lower) * (inBucket === 0 ? 0 : (rank - below) / inBucket)) * 1000;
      }
      lower = bound;
      below = cumulative;
    }
    return lower * 1000;
  };
  const highest = sorted.filter(([, cumulative], index) => cumulative > (sorted[index - 1]?.[1] ?? 0)).at(-1)?.[0];
  return {
    count,
    sumSeconds: sum,
    meanMs: count === 0 ? 0 : (sum / count) * 1000,
    p50Ms: quantile(0.5),
    p95Ms: quantile(0.95),
    maxBucketMs: highest === undefined ? 0 : highest * 1000,
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Source files whose compiled output is missing or older than they are. */
export function staleSources(sourceDir: string, outputDir: string, repo: string): string[] {
  const stale: string[] = [];
  for (const entry of readdirSync(sourceDir, { withFileTypes: true })) {
    const source = join(sourceDir, entry.name);
    if (entry.isDirectory()) stale.push(...staleSources(source, join(outputDir, entry.name), repo));
    else if (entry.name.endsWith('.ts')) {
      const output = join(outputDir, entry.name.replace(/\.ts$/, '.js'));
      if (!existsSync(output) || statSync(output).mtimeMs < statSync(source).mtimeMs)
        stale.push(source.slice(repo.length + 1));
    }
  }
  return stale;
}

export function mib(kib: number): string {
  return (kib / 1024).toFixed(1);
}
