import { pino } from 'pino';
import { createPinoLogger } from '../../../adapters/common/logging/pino-logger.js';
import { hostArchitecture } from '../../../adapters/node/host/host-architecture.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { HostIdentity } from '../host-identity.js';

/**
 * Who an embedding process is, when the embedder does not say: read from this process, as the
 * CLI reads its own. `command` names the embedder in the lock holder and the logs.
 */
export function embedderIdentity(): HostIdentity {
  return {
    euid: process.geteuid?.() ?? 0,
    arch: hostArchitecture(),
    pid: process.pid,
    command: `${process.title} (embedding agent-upgrade)`,
  };
}

/**
 * The logger of an embedder that brings none: pino's JSON lines on stderr at `info`, written
 * synchronously (nothing lost at exit), with the same URL redaction as the CLI's.
 */
export function embedderLogger(): Logger {
  return createPinoLogger('info', pino.destination({ dest: 2, sync: true }));
}
