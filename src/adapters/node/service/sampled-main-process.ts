import type { Clock } from '../../../ports/common/clock.js';
import type { HealthLimits, HealthVerdict, HealthWaitOptions } from '../../../ports/node/service-manager.js';
import { executableIn, waitForStableExecutable, type MainProcessObservation } from './stable-executable.js';

/**
 * `mainExecutable` and `waitHealthy` for a service manager that can sample its agent's main
 * process: each adapter says how it polls (`sample`), and all of them judge by the same rule.
 */
export abstract class SampledMainProcess {
  /** The clock the health wait measures on. */
  protected abstract readonly healthClock: Clock;

  /** One poll of the main process, as the manager reports it now. */
  protected abstract sample(): Promise<MainProcessObservation>;

  async mainExecutable(): Promise<string | null> {
    return executableIn(await this.sample());
  }

  async waitHealthy(
    expectedPath: string,
    limits: HealthLimits,
    options: HealthWaitOptions = {},
  ): Promise<HealthVerdict> {
    return waitForStableExecutable(() => this.sample(), expectedPath, limits, this.healthClock, options);
  }
}
