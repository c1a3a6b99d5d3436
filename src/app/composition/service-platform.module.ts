import { ContainerModule } from 'inversify';
import { NoServiceManager } from '../../adapters/none/none-service-manager.js';
import { UnavailableServiceManager } from '../../adapters/none/unavailable-service-manager.js';
import { renderServiceAssets } from '../../adapters/systemd/render-units.js';
import { SystemdServiceManager } from '../../adapters/systemd/systemd-service-manager.js';
import { RECOVERY_SCRIPT_MODE, type SlotLayout } from '../../domain/slot-layout.js';
import type { Clock } from '../../ports/clock.js';
import type { FileSystem } from '../../ports/file-system.js';
import type { ProcessRunner } from '../../ports/process-runner.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HostIdentity } from '../host-identity.js';
import { Tokens } from '../tokens.js';

/** What the recovery script records as the failure when systemd gave up on the agent. */
export const RECOVERY_MESSAGE = 'the upgraded agent failed repeatedly; systemd ran the recovery unit';

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

/** `service.manager: "systemd"`: units, recovery script, systemctl and systemd-run. */
export const systemdServiceModule = new ContainerModule(({ bind }) => {
  bind(Tokens.ServiceManager)
    .toResolvedValue(
      (fs: FileSystem, runner: ProcessRunner, clock: Clock, config: UpgraderConfig, layout: SlotLayout, identity: HostIdentity) =>
        new SystemdServiceManager({ fs, runner, clock, unit: config.service.unit, unitDir: layout.unitDir, assets: systemdAssets(config, layout, identity) }),
      [Tokens.FileSystem, Tokens.ProcessRunner, Tokens.Clock, Tokens.Config, Tokens.Layout, Tokens.HostIdentity],
    )
    .inSingletonScope();
});

/** The agent unit, the recovery unit and the recovery script for this configuration. */
export function systemdAssets(config: UpgraderConfig, layout: SlotLayout, identity: HostIdentity) {
  const { service, agent } = config;
  const invocation = identity.invocation;
  const recoverOptions = [
    ...(config.root === '/' ? [] : ['--root', config.root]),
    ...(invocation?.configPath == null ? [] : ['--config', invocation.configPath]),
  ];
  return renderServiceAssets(
    {
      description: `${agent.name} agent`,
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
      // Self-hosted: the last-good agent is the upgrader. Sidecar: this upgrader, run again.
      recoverWith: agent.mode === 'self-hosted' ? 'last-good' : (invocation?.executable ?? 'agent-upgrade'),
      recoverOptions,
      message: RECOVERY_MESSAGE,
    },
    layout.unitDir,
    RECOVERY_SCRIPT_MODE,
  );
}
