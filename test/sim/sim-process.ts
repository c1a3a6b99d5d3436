import { TarGzExtractor } from '../../src/adapters/node/archive/tar-gz-extractor.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import { memoryPlatform } from '../../src/app/node/composition/create-container.js';
import type { PlatformPorts } from '../../src/app/node/composition/port-overrides.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { FailureSignal } from '../../src/app/common/failure-signal.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import type { Result } from '../../src/domain/common/failure.js';
import type { Logger } from '../../src/ports/common/logger.js';
import type { SimulatedCrash } from '../../src/adapters/node/memory/memory-file-system.js';

/** The ports a simulated host hands to each of its processes (the extractor is the real one). */
export type SimPorts = Omit<PlatformPorts, 'archiveExtractor'>;

/**
 * One simulated process: the production composition root over the memory platform, so what a
 * simulation proves is what a real process wires (the use cases, the session, the host lock).
 */
export function simProcess(ports: SimPorts, config: UpgraderConfig, logger: Logger, pid = 4242): Upgrader {
  const created = createUpgrader({
    config,
    identity: { euid: 0, arch: 'amd64', pid, command: 'agent-upgrade daemon' },
    logger,
    platform: memoryPlatform({ ...ports, archiveExtractor: new TarGzExtractor() }),
  });
  if (!created.ok) throw new Error(`simulated process: ${created.failure.code} ${created.failure.message}`);
  return created.value;
}

/** A use case's failure thrown as it is inside the process, for harnesses that step by throwing. */
export function orThrow<T>(result: Result<T>): T {
  if (!result.ok) throw new FailureSignal(result.failure);
  return result.value;
}

/** `crash at op 41 (rename /usr/local/lib/…-current)`: where a simulated power loss struck. */
export function describeCrash(crash: SimulatedCrash): string {
  return crash.op === null
    ? 'crash at a later call'
    : `crash at op ${crash.op.index} (${crash.op.op} ${crash.op.path})`;
}
