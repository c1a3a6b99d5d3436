import { ContainerModule } from 'inversify';
import { NoServiceManager } from '../../adapters/none/none-service-manager.js';
import { Tokens } from '../tokens.js';

/** `service.manager: "none"`: no service to restart (provisioning, reset hosts, sandboxes). */
export const noneServiceModule = new ContainerModule(({ bind }) => {
  bind(Tokens.ServiceManager).toConstantValue(new NoServiceManager());
});
