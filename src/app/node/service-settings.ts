import { rerootPath } from '../../domain/node/layout/posix-path.js';
import type { UpgraderConfig } from './config/upgrader-config.js';
import type { HostIdentity } from './host-identity.js';

/** What recovery records as the failure when the service manager gave up on the agent. */
export const RECOVERY_MESSAGE = 'the upgraded agent failed repeatedly; the service manager ran recovery';

export function supervisorSocketPath(config: UpgraderConfig): string {
  return rerootPath(config.root, config.service.supervisorSocket);
}

/**
 * How recovery runs `recover` (the systemd recovery script and the supervisor's on-failure
 * hook alike). Self-hosted: through the last-good binary, which is the upgrader. Sidecar: this
 * upgrader again. Either way with the options that select this configuration.
 */
export function recoverInvocation(
  config: UpgraderConfig,
  identity: HostIdentity,
): { readonly recoverWith: 'last-good' | string; readonly recoverOptions: readonly string[] } {
  const invocation = identity.invocation;
  return {
    recoverWith: config.agent.mode === 'self-hosted' ? 'last-good' : (invocation?.executable ?? 'agent-upgrade'),
    recoverOptions: [
      ...(config.root === '/' ? [] : ['--root', config.root]),
      ...(invocation?.configPath == null ? [] : ['--config', invocation.configPath]),
    ],
  };
}
