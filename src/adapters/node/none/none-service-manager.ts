import type {
  HealthVerdict,
  RestartObservation,
  ServiceActivity,
  ServiceManager,
} from '../../../ports/node/service-manager.js';

/**
 * `service.manager: "none"`: there is no service to restart. Activation installs and switches
 * but leaves the agent stopped (provisioning, reset/rejoin), so there are no assets to write
 * and no health to wait for.
 */
export class NoServiceManager implements ServiceManager {
  readonly name = 'none' as const;

  async convergeAssets(): Promise<{ readonly changed: boolean }> {
    return { changed: false };
  }

  async assetsCurrent(): Promise<boolean> {
    return true;
  }

  async activity(): Promise<ServiceActivity> {
    return 'absent';
  }

  async currentRun(): Promise<string | null> {
    return null;
  }

  async restart(): Promise<{ readonly restarted: boolean }> {
    return { restarted: false };
  }

  async scheduleRestart(): Promise<void> {
    // Nothing runs, so there is nothing to restart.
  }

  /** No service, no restarts to count. */
  async restartCount(): Promise<RestartObservation> {
    return { restartEpoch: null, restarts: null };
  }

  async mainExecutable(): Promise<string | null> {
    return null;
  }

  async waitHealthy(): Promise<HealthVerdict> {
    return { kind: 'not-running' };
  }
}
