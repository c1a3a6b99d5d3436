import { probeFailed, type ProbeOutcome, type ProbeTarget } from '../../../domain/node/health/probe-target.js';
import type { HealthProbe, ProbeAttemptOptions } from '../../../ports/node/health-probe.js';
import type { MemoryServiceManager } from './memory-service-manager.js';

export interface MemoryHealthProbeOptions {
  /** The unit the probe reaches (a function: a simulated reboot replaces it). */
  readonly services: () => MemoryServiceManager;
  /**
   * A fault consulted before every attempt (a simulation's seeded PRNG): a non-null outcome
   * replaces what the agent would answer, e.g. a timeout of an agent that is merely slow.
   */
  readonly fault?: (target: ProbeTarget) => ProbeOutcome | null;
}

/**
 * The probe of a simulated host: the agent the memory service manager runs answers it. A
 * `probe-fails` agent answers 503, no running agent refuses the connection, any other running
 * agent answers 200. Every attempt is kept, with its answer, for the simulation's trace.
 */
export class MemoryHealthProbe implements HealthProbe {
  readonly attempts: ProbeOutcome[] = [];

  constructor(private readonly options: MemoryHealthProbeOptions) {}

  async attempt(target: ProbeTarget, options: ProbeAttemptOptions): Promise<ProbeOutcome> {
    const outcome = options.signal?.aborted === true ? probeFailed('interrupted', 'interrupted') : this.answer(target);
    this.attempts.push(outcome);
    return outcome;
  }

  private answer(target: ProbeTarget): ProbeOutcome {
    const injected = this.options.fault?.(target) ?? null;
    if (injected !== null) return injected;
    const behaviour = this.options.services().runningBehaviour();
    if (behaviour === null) return probeFailed('connection-failed', 'connection refused');
    return behaviour === 'probe-fails' ? probeFailed('http-status', 'HTTP 503') : { kind: 'succeeded' };
  }
}
