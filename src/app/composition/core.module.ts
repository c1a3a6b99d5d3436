import { ContainerModule } from 'inversify';
import type { SlotLayout } from '../../domain/slot-layout.js';
import type { FileSystem } from '../../ports/file-system.js';
import type { Logger } from '../../ports/logger.js';
import type { ServiceManager } from '../../ports/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HostIdentity } from '../host-identity.js';
import type { Clock } from '../../ports/clock.js';
import type { ProcessRunner } from '../../ports/process-runner.js';
import { probeVersion } from '../artifact/check-candidate.js';
import { LayoutEngine } from '../layout/layout-engine.js';
import { Tokens } from '../tokens.js';

/** App services, bound with explicit tokens and no decorator metadata. */
export const coreModule = new ContainerModule(({ bind }) => {
  bind(Tokens.LayoutEngine)
    .toResolvedValue(
      (
        fs: FileSystem,
        services: ServiceManager,
        logger: Logger,
        layout: SlotLayout,
        config: UpgraderConfig,
        identity: HostIdentity,
        runner: ProcessRunner,
        clock: Clock,
      ) =>
        new LayoutEngine(fs, services, logger.child({ component: 'layout' }), {
          layout,
          binaryMaxBytes: config.artifact.maxBinaryBytes,
          euid: identity.euid,
          probeVersion: (path) => probeVersion({ fs, runner, clock }, path),
        }),
      [
        Tokens.FileSystem,
        Tokens.ServiceManager,
        Tokens.Logger,
        Tokens.Layout,
        Tokens.Config,
        Tokens.HostIdentity,
        Tokens.ProcessRunner,
        Tokens.Clock,
      ],
    )
    .inSingletonScope();
});
