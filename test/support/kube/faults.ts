// Fault injection and request bookkeeping. Faults are consumed in the order they were armed, and a
// request that trips one never reaches storage, so it cannot change state or emit events.

import type { IncomingHttpHeaders } from 'node:http';

export interface KubeRequest {
  readonly method: string;
  /** The URL path without the query string. */
  readonly path: string;
  /** Query parameters (the last value wins for a repeated name). */
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  /** The request body as UTF-8 text; undefined when there was none. */
  readonly body: string | undefined;
}

export interface RequestMatcher {
  /** Case-insensitive. */
  readonly method?: string;
  /** Tested against the path without the query string. */
  readonly path?: RegExp;
  /** true: only watch requests (`watch=true` or `watch=1`); false: only non-watch requests. */
  readonly watch?: boolean;
}

export interface FailResponse {
  readonly status: number;
  /** How many matching requests to fail (default 1). */
  readonly times?: number;
  /** Hold the error answer this long first (e.g. to let a client-side timeout fire). */
  readonly delayMs?: number;
  /** Sent as the `Retry-After` header and the Status's `details.retryAfterSeconds`, as a throttling API server does. */
  readonly retryAfterSeconds?: number;
}

export const isWatch = (query: Readonly<Record<string, string>>): boolean =>
  query['watch'] === 'true' || query['watch'] === '1';

export function matches(matcher: RequestMatcher, req: KubeRequest): boolean {
  // Node's parser gives the method in capitals; a simulation arms thousands of rules, so the
  // common case compares without making new strings.
  if (matcher.method !== undefined && matcher.method !== req.method && !sameMethod(matcher.method, req.method))
    return false;
  if (matcher.watch !== undefined && matcher.watch !== isWatch(req.query)) return false;
  if (matcher.path !== undefined) {
    matcher.path.lastIndex = 0; // a /g or /y pattern is stateful across test() calls
    if (!matcher.path.test(req.path)) return false;
  }
  return true;
}

function sameMethod(a: string, b: string): boolean {
  return a.toUpperCase() === b.toUpperCase();
}

interface FailRule {
  readonly matcher: RequestMatcher;
  readonly status: number;
  readonly delayMs: number;
  readonly retryAfterSeconds: number | undefined;
  remaining: number;
}

interface DelayRule {
  readonly matcher: RequestMatcher;
  readonly ms: number;
}

export class Faults {
  private readonly failures: FailRule[] = [];
  private readonly delays = new Set<DelayRule>();
  private conflicts = 0;

  failNext(matcher: RequestMatcher, response: FailResponse): void {
    const times = response.times ?? 1;
    if (!Number.isInteger(times) || times < 1) throw new RangeError(`times must be a positive integer: ${times}`);
    const { status, delayMs = 0, retryAfterSeconds } = response;
    this.failures.push({ matcher, status, delayMs, retryAfterSeconds, remaining: times });
  }

  conflictNext(times: number): void {
    if (!Number.isInteger(times) || times < 0) throw new RangeError(`times must be a non-negative integer: ${times}`);
    this.conflicts += times;
  }

  /** Persistent until the returned function is called. */
  delay(matcher: RequestMatcher, ms: number): () => void {
    const rule: DelayRule = { matcher, ms };
    this.delays.add(rule);
    return () => void this.delays.delete(rule);
  }

  /** Every matching delay rule applies, so independent delays add up. */
  delayFor(req: KubeRequest): number {
    let total = 0;
    for (const rule of this.delays) if (matches(rule.matcher, req)) total += rule.ms;
    return total;
  }

  takeFailure(req: KubeRequest): { status: number; delayMs: number; retryAfterSeconds?: number } | undefined {
    const index = this.failures.findIndex((rule) => matches(rule.matcher, req));
    const rule = this.failures[index];
    if (rule === undefined) return undefined;
    rule.remaining -= 1;
    if (rule.remaining === 0) this.failures.splice(index, 1);
    const answer = { status: rule.status, delayMs: rule.delayMs };
    return rule.retryAfterSeconds === undefined ? answer : { ...answer, retryAfterSeconds: rule.retryAfterSeconds };
  }

  takeConflict(): boolean {
    if (this.conflicts === 0) return false;
    this.conflicts -= 1;
    return true;
  }
}
