import { nextProbeStep, recordProbeAttempt, startProbing } from '../../../domain/node/health/probe-decision.js';
import { nextWatchProbeStep } from '../../../domain/node/health/watch-probe.js';
import { describeProbeTarget, type ProbeSettings } from '../../../domain/node/health/probe-target.js';
import { rerootPath } from '../../../domain/node/layout/posix-path.js';
import type { RecordedFailure } from '../../../domain/node/record/upgrade-record.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { HealthProbe } from '../../../ports/node/health-probe.js';
import type { HealthLimits, HealthWaitOptions, ServiceManager } from '../../../ports/node/service-manager.js';
import { LogKeys } from '../../common/log-keys.js';
import { tellHealth, type HealthObserver } from './health-progress.js';

export interface HealthGateDependencies {
  readonly services: ServiceManager;
  readonly probe: HealthProbe;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `health`: the stability limits, and the probe (its socket already under the root) if any. */
  readonly health: HealthLimits & { readonly probe?: ProbeSettings };
}

/** What the gate says; `source` tells whether the process or the probe failed it. */
export type GateVerdict =
  | { readonly kind: 'healthy' }
  | { readonly kind: 'unhealthy'; readonly reason: string; readonly source: 'process' | 'probe' }
  | { readonly kind: 'not-running' };

/**
 * Which binary is judged. A `candidate` must pass the whole gate: a stable process, then the
 * probe. Going back to a binary already known good (`known-good`: a rollback, a restart into
 * last-good) is judged by its process alone: a probe can fail for reasons outside both binaries
 * (a dependency down), and failing the binary that last worked would leave nothing better to
 * run — the operator's `rollback` would even quarantine it.
 */
export type GatePurpose = 'candidate' | 'known-good';

/**
 * The health gate (docs/protocol.md#health-probes): the service manager's stability wait, then,
 * when `health.probe` is configured, the probe run one attempt at a time as the domain decides
 * (`nextProbeStep`), with the period's waits on the Clock. The whole gate is bounded by
 * `health.timeoutMs` from its start.
 */
export class HealthGate {
  constructor(private readonly deps: HealthGateDependencies) {}

  /** `observe`, when given, hears how the wait goes (health-progress.ts); it never changes the verdict. */
  async judge(
    expectedPath: string,
    purpose: GatePurpose,
    signal?: AbortSignal,
    observe?: HealthObserver,
  ): Promise<GateVerdict> {
    const { timeoutMs, stableMs, pollMs } = this.deps.health;
    const startMs = this.deps.clock.monotonicMs();
    const options: HealthWaitOptions = {
      ...(signal === undefined ? {} : { signal }),
      // Only when someone watches: the daemon's waits build no closure and report nothing.
      ...(observe === undefined
        ? {}
        : {
            onPoll: (ms: number) =>
              tellHealth(observe, { phase: 'stable', purpose, stableMs: Math.min(ms, stableMs), neededMs: stableMs }),
          }),
    };
    const stable = await this.deps.services.waitHealthy(expectedPath, { timeoutMs, stableMs, pollMs }, options);
    if (stable.kind === 'not-running') return stable;
    if (stable.kind === 'unhealthy') return { ...stable, source: 'process' };
    if (purpose === 'known-good') return stable;
    return this.probeSince(startMs, signal, observe);
  }

  /**
   * A self-hosted daemon judging itself: it is the candidate (the startup gate checked), and it
   * proves stable by staying up for `health.stableMs`; then the probe.
   */
  async judgeSelf(): Promise<GateVerdict> {
    const startMs = this.deps.clock.monotonicMs();
    await this.deps.clock.sleep(this.deps.health.stableMs);
    return this.probeSince(startMs);
  }

  /**
   * The probe half alone, for a gate that proved stability itself, bounded by `health.timeoutMs`
   * from `startMs` (a monotonic reading). Healthy when no probe is configured.
   */
  async probeSince(startMs: number, signal?: AbortSignal, observe?: HealthObserver): Promise<GateVerdict> {
    const settings = this.deps.health.probe;
    if (settings === undefined) return { kind: 'healthy' };
    const { clock, logger } = this.deps;
    let progress = startProbing(settings, clock.monotonicMs(), startMs + this.deps.health.timeoutMs);
    const target = describeProbeTarget(settings.target);
    const tell = (): void =>
      tellHealth(observe, {
        phase: 'probe',
        successes: progress.successesInRow,
        successesNeeded: settings.successThreshold,
        failures: progress.failuresInRow,
        failuresAllowed: settings.failureThreshold,
      });
    tell();
    // Bounded twice: the domain fails the run after `attemptsMax` attempts, and so does this loop.
    for (let round = 0; round <= progress.attemptsMax; round += 1) {
      const step = nextProbeStep(settings, progress, clock.monotonicMs());
      if (step.kind === 'passed') {
        logger.info({ [LogKeys.probe]: target, attempts: progress.attempts }, 'The health probe passed.');
        return { kind: 'healthy' };
      }
      if (step.kind === 'failed') {
        logger.warn(
          { [LogKeys.probe]: target, attempts: progress.attempts, why: step.why },
          `${capitalised(step.reason)}.`,
        );
        return { kind: 'unhealthy', reason: step.reason, source: 'probe' };
      }
      if (!(await this.waitFor(step.waitMs, signal))) return interrupted();
      const startedMs = clock.monotonicMs();
      const outcome = await this.deps.probe.attempt(
        settings.target,
        signal === undefined ? { timeoutMs: step.timeoutMs } : { timeoutMs: step.timeoutMs, signal },
      );
      if (isAborted(signal)) return interrupted();
      progress = recordProbeAttempt(progress, startedMs, outcome);
      tell();
      if (outcome.kind === 'failed')
        logger.info(
          { [LogKeys.probe]: target, [LogKeys.code]: outcome.cause, failuresInRow: progress.failuresInRow },
          `A health probe attempt failed: ${outcome.reason}.`,
        );
    }
    return { kind: 'unhealthy', reason: 'the health probe did not settle', source: 'probe' };
  }

  /**
   * The probe inside the watch window (docs/protocol.md#watch-window): attempts one per period
   * for `sliceMs`, each after `stillRunning` confirmed the candidate still runs; held unless
   * `failureThreshold` failures come in a row, counting `failuresBefore` from the slice before.
   * Null when no probe is configured (the caller judges the process alone). `onAttempt` hears of
   * each attempt (for display: the watch window's progress).
   */
  async keepsPassing(
    sliceMs: number,
    failuresBefore: number,
    stillRunning: () => Promise<boolean>,
    signal?: AbortSignal,
    onAttempt?: () => void,
  ): Promise<{ readonly verdict: GateVerdict; readonly failuresInRow: number } | null> {
    const settings = this.deps.health.probe;
    if (settings === undefined) return null;
    const { clock } = this.deps;
    const startMs = clock.monotonicMs();
    let progress = { ...startProbing(settings, startMs, startMs + sliceMs), failuresInRow: failuresBefore };
    for (let round = 0; round <= progress.attemptsMax; round += 1) {
      const step = nextWatchProbeStep(settings, progress, clock.monotonicMs());
      if (step.kind === 'held') break;
      if (step.kind === 'failed') {
        this.deps.logger.warn({ probe: describeProbeTarget(settings.target) }, `${capitalised(step.reason)}.`);
        return { verdict: { kind: 'unhealthy', reason: step.reason, source: 'probe' }, failuresInRow: 0 };
      }
      if (!(await this.waitFor(step.waitMs, signal))) return { verdict: interrupted(), failuresInRow: 0 };
      if (!(await stillRunning()))
        return {
          verdict: { kind: 'unhealthy', reason: 'the agent stopped running the candidate', source: 'process' },
          failuresInRow: 0,
        };
      const attemptStartMs = clock.monotonicMs();
      progress = recordProbeAttempt(
        progress,
        attemptStartMs,
        await this.deps.probe.attempt(settings.target, { timeoutMs: step.timeoutMs }),
      );
      onAttempt?.();
    }
    // The slice's time is watched in full, whatever the attempts took.
    if (!(await this.waitFor(startMs + sliceMs - clock.monotonicMs(), signal)))
      return { verdict: interrupted(), failuresInRow: 0 };
    return { verdict: { kind: 'healthy' }, failuresInRow: progress.failuresInRow };
  }

  /** Sleeps on the Clock; false when the signal ended the wait (or had already). */
  private async waitFor(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
    if (ms <= 0) return !isAborted(signal);
    try {
      await this.deps.clock.sleep(ms, signal);
      return true;
    } catch (error) {
      // Only the signal's own rejection is an outcome; anything else is not ours to swallow.
      if (isAborted(signal)) return false;
      throw error;
    }
  }
}

/**
 * The probe as this process reaches it: a unix socket is a host path the upgrader opens, so it
 * lies under `--root` like every other; an exec command runs as written, like `agent.args`.
 */
export function probeUnderRoot(settings: ProbeSettings, root: string): ProbeSettings {
  const { target } = settings;
  if (target.kind !== 'unix-http') return settings;
  return { ...settings, target: { ...target, socket: rerootPath(root, target.socket) } };
}

/** Why the probe failed the gate, or null when it passed or the process failed it. */
export function probeReasonOf(verdict: GateVerdict): string | null {
  return verdict.kind === 'unhealthy' && verdict.source === 'probe' ? verdict.reason : null;
}

/**
 * An unhealthy failure the recovery policy recorded, with the probe's reason appended, so the
 * operation's status says why (the reason holds no URL and no probe output).
 */
export function withProbeReason(recorded: RecordedFailure, probeReason: string | null): RecordedFailure {
  if (recorded.code !== 'E_UNHEALTHY' || probeReason === null) return recorded;
  return { ...recorded, message: `${recorded.message}; ${probeReason}` };
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function interrupted(): GateVerdict {
  return { kind: 'unhealthy', reason: 'the wait was interrupted', source: 'probe' };
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
