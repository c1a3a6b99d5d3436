import { probeFailed, type ProbeOutcome } from '../../../domain/node/health/probe-target.js';
import type { HealthProbe } from '../../../ports/node/health-probe.js';

/**
 * The probe of a platform that has none (an embedder's memory platform given no `healthProbe`):
 * every attempt fails, so a configured probe can never pass unproven. Without `health.probe`
 * the gate never calls it.
 */
export class NoHealthProbe implements HealthProbe {
  async attempt(): Promise<ProbeOutcome> {
    return probeFailed('unavailable', 'no health probe is available on this platform');
  }
}
