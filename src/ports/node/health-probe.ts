import type { ProbeOutcome, ProbeTarget } from '../../domain/node/health/probe-target.js';

export type { ProbeFailureCause, ProbeOutcome, ProbeTarget } from '../../domain/node/health/probe-target.js';

export interface ProbeAttemptOptions {
  /** The attempt's whole bound: connecting, the answer or the program's exit, and cleanup. */
  readonly timeoutMs: number;
  /** Ends the attempt early (outcome `interrupted`). */
  readonly signal?: AbortSignal;
}

/**
 * One attempt of the agent's health probe (config `health.probe`; docs/configuration.md#health).
 * The gate that repeats it, counts successes and failures and applies the deadline is the
 * domain's (`src/domain/node/health/probe-decision.ts`); an adapter runs exactly one attempt.
 *
 * Contract, for every implementation:
 * - never throws for the agent's failures or the target's: a refused connection, a status
 *   outside 200–399, a non-zero exit, a timeout, a target that is not loopback are all outcomes
 *   (`failed`, with a stable `cause` and a short `reason`);
 * - returns within `timeoutMs` plus the time a killed process tree takes to go, and leaves
 *   nothing running behind it: an exec probe's whole process tree is killed;
 * - an exec target runs without a shell, its output read up to a few KiB and never reported;
 * - an HTTP target is reached only on loopback (or a unix socket); the reason never repeats the
 *   URL, so a secret in its query cannot leak.
 */
export interface HealthProbe {
  attempt(target: ProbeTarget, options: ProbeAttemptOptions): Promise<ProbeOutcome>;
}
