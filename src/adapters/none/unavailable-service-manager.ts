import { ServiceError } from '../../domain/port-errors.js';
import type { HealthVerdict, ServiceActivity, ServiceManager } from '../../ports/service-manager.js';

/**
 * Stands in for a configured service platform this build cannot drive yet. Every call fails
 * with `not-supported` (E_SERVICE), and `assetsCurrent` — which mutating commands call before
 * changing anything — fails too, so nothing is changed on the way to that error.
 */
export class UnavailableServiceManager implements ServiceManager {
  readonly name: 'systemd' | 'supervisor';

  constructor(platform: 'systemd' | 'supervisor') {
    this.name = platform;
  }

  convergeAssets(): Promise<{ readonly changed: boolean }> {
    return this.refuse();
  }

  assetsCurrent(): Promise<boolean> {
    return this.refuse();
  }

  activity(): Promise<ServiceActivity> {
    return this.refuse();
  }

  restart(): Promise<{ readonly restarted: boolean }> {
    return this.refuse();
  }

  scheduleRestart(): Promise<void> {
    return this.refuse();
  }

  mainExecutable(): Promise<string | null> {
    return this.refuse();
  }

  waitHealthy(): Promise<HealthVerdict> {
    return this.refuse();
  }

  private refuse(): Promise<never> {
    return Promise.reject(
      new ServiceError('not-supported', `the ${this.name} service platform is not available in this build; set service.manager to "none" or supply a ServiceManager through the library API`),
    );
  }
}
