import { ContainerModule } from 'inversify';
import { NoServiceManager } from '../../../adapters/node/none/none-service-manager.js';
import { SupervisorServiceManager } from '../../../adapters/node/supervisor/supervisor-service-manager.js';
import { renderServiceAssets } from '../../../adapters/node/systemd/render-units.js';
import { SystemdServiceManager } from '../../../adapters/node/systemd/systemd-service-manager.js';
import { RECOVERY_SCRIPT_MODE, type SlotLayout } from '../../../domain/node/layout/slot-layout.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HostIdentity } from '../host-identity.js';
import { bindBuilt } from '../../common/composition/bind-built.js';
import { Tokens } from '../tokens.js';
import { RECOVERY_MESSAGE, recoverInvocation, supervisorSocketPath } from '../service-settings.js';

/** `service.manager: "none"`: no service to restart (provisioning, reset hosts, sandboxes). */
export const noneServiceModule = new ContainerModule(({ bind }) => {
  bind(Tokens.ServiceManager).toConstantValue(new NoServiceManager());
});

/** `service.manager: "supervisor"`: a client of the built-in supervisor's control socket. */
export const supervisorServiceModule = new ContainerModule(({ bind }) => {
  bindBuilt(bind, Tokens.ServiceManager, { clock: Tokens.Clock, config: Tokens.Config }, ({ clock, config }) => {
    return new SupervisorServiceManager({ controlSocket: supervisorSocketPath(config), clock });
  });
});

/** `service.manager: "systemd"`: units, recovery script, systemctl and systemd-run. */
export const systemdServiceModule = new ContainerModule(({ bind }) => {
  const dependencies = {
    fs: Tokens.FileSystem,
    runner: Tokens.ProcessRunner,
    clock: Tokens.Clock,
    config: Tokens.Config,
    layout: Tokens.Layout,
    identity: Tokens.HostIdentity,
  };
  bindBuilt(bind, Tokens.ServiceManager, dependencies, ({ fs, runner, clock, config, layout, identity }) => {
    return new SystemdServiceManager({
      fs,
      runner,
      clock,
      unit: config.service.unit,
      reloadWatched: [config.service.unit, config.service.recoveryUnit],
      unitDir: layout.unitDir,
      assets: systemdAssets(config, layout, identity),
    });
  });
});

/** The agent unit, the recovery unit and the recovery script for this configuration. */
export function systemdAssets(config: UpgraderConfig, layout: SlotLayout, identity: HostIdentity) {
  const { service, agent } = config;
  return renderServiceAssets(
    {
      description: `${agent.name} agent`,
      agentName: agent.name,
      healthTimeoutMs: config.health.timeoutMs,
      unit: service.unit,
      recoveryUnit: service.recoveryUnit,
      currentLink: layout.current,
      args: agent.args,
      restartSec: service.restartSec,
      startLimitBurst: service.startLimitBurst,
      startLimitIntervalSec: service.startLimitIntervalSec,
      recoveryScript: layout.recoveryScript,
    },
    {
      unit: service.unit,
      record: layout.record,
      lastGoodLink: layout.lastGood,
      ...recoverInvocation(config, identity),
      message: RECOVERY_MESSAGE,
    },
    layout.unitDir,
    RECOVERY_SCRIPT_MODE,
  );
}
