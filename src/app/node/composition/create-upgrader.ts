import { fail, ok, type Result } from '../../../domain/common/failure.js';
import { deriveLayout } from '../../../domain/node/layout/slot-layout.js';
import type { Logger } from '../../../ports/common/logger.js';
import { findRuleProblem } from '../config/config-rules.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HostIdentity } from '../host-identity.js';
import { Tokens } from '../tokens.js';
import type { Upgrader } from '../upgrader.js';
import { createContainer, type Platform } from './create-container.js';
import { embedderIdentity, embedderLogger } from './embedder-defaults.js';
import type { PortOverrides } from './port-overrides.js';

export interface UpgraderOptions {
  readonly config: UpgraderConfig;
  /** Who this process is; by default read from it (its euid, pid and the host's architecture). */
  readonly identity?: HostIdentity;
  /** By default pino's JSON lines on stderr at `info`. */
  readonly logger?: Logger;
  /**
   * The ports of this process; by default the real host, with the service, container and cluster
   * platforms `config` names. A simulation passes `memoryPlatform(…)` from `agent-upgrade/testing`.
   */
  readonly platform?: Platform;
  /** Single ports replaced on top of the platform (an embedder's own artifact source, …). */
  readonly overrides?: PortOverrides;
}

/**
 * Builds an Upgrader from a resolved configuration: the composition root wires the whole process
 * (the platform's ports, the use cases, the daemon session), and this is its one entry point.
 */
export function createUpgrader(options: UpgraderOptions): Result<Upgrader> {
  const { config } = options;
  // A configuration an embedder built by hand gets the same cross-key rules as a parsed file.
  const problem = findRuleProblem(config);
  if (problem !== null) return fail('E_CONFIG', `${problem.keys.join(', ')}: ${problem.problem}`);
  const layout = deriveLayout({ root: config.root, agentName: config.agent.name, ...config.paths });
  if (!layout.ok) return fail('E_CONFIG', layout.failure.message);
  const container = createContainer({
    config,
    layout: layout.value,
    identity: options.identity ?? embedderIdentity(),
    logger: options.logger ?? embedderLogger(),
    platform: options.platform,
    overrides: options.overrides ?? {},
  });
  return ok(container.get(Tokens.Upgrader));
}
