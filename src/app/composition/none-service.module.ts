import { ContainerModule } from 'inversify';
import { NoServiceManager } from '../../adapters/none/none-service-manager.js';
import { UnavailableServiceManager } from '../../adapters/none/unavailable-service-manager.js';
import { Tokens } from '../tokens.js';

/** `service.manager: "none"`: no service to restart (provisioning, reset hosts, sandboxes). */
export const noneServiceModule = new ContainerModule(({ bind }) => {
  bind(Tokens.ServiceManager).toConstantValue(new NoServiceManager());
});

/** A platform named in the configuration that this build cannot drive yet: fails on first use. */
export function unavailableServiceModule(platform: 'systemd' | 'supervisor'): ContainerModule {
  return new ContainerModule(({ bind }) => {
    bind(Tokens.ServiceManager).toConstantValue(new UnavailableServiceManager(platform));
  });
}
