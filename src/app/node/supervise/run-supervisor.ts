import { Supervisor } from '../../../adapters/node/supervisor/supervisor.js';
import { SupervisorError } from '../../../adapters/node/supervisor/supervisor-error.js';
import { failure } from '../../../domain/common/failure.js';
import { raise } from '../../common/failure-signal.js';
import { RECOVERY_MESSAGE, recoverInvocation, supervisorSocketPath } from '../service-settings.js';
import type { SlotLayout } from '../../../domain/node/layout/slot-layout.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HostIdentity } from '../host-identity.js';

export interface SupervisorRunDependencies {
  readonly config: UpgraderConfig;
  readonly layout: SlotLayout;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly clock: Clock;
}

/** The agent gets this long to stop on SIGTERM, as the systemd unit's TimeoutStopSec. */
const STOP_TIMEOUT_MS = 60_000;

/**
 * `supervise`: runs the agent's current link under the built-in supervisor until `signal`
 * aborts, with the semantics the systemd unit has — restart on failure after restartSec, a start
 * limit, and when it is hit the on-failure hook, which runs `recover` exactly as the systemd
 * recovery script does (recover restarts the agent through the control socket).
 */
export async function runSupervisor(parts: SupervisorRunDependencies, signal: AbortSignal): Promise<void> {
  const { config, layout, identity, logger, clock } = parts;
  const { recoverWith, recoverOptions } = recoverInvocation(config, identity);
  const supervisor = new Supervisor({
    execStart: layout.current,
    args: config.agent.args,
    controlSocket: supervisorSocketPath(config),
    restartDelayMs: config.service.restartSec * 1000,
    startLimitBurst: config.service.startLimitBurst,
    startLimitIntervalMs: config.service.startLimitIntervalSec * 1000,
    stopTimeoutMs: STOP_TIMEOUT_MS,
    onFailure: {
      command: recoverWith === 'last-good' ? layout.lastGood : recoverWith,
      args: ['recover', '--message', RECOVERY_MESSAGE, ...recoverOptions],
      // recover may wait twice the health timeout for the lock, then restarts and health-checks.
      timeoutMs: 3 * config.health.timeoutMs + STOP_TIMEOUT_MS,
    },
    logger,
    clock,
  });
  try {
    await supervisor.start();
  } catch (error) {
    if (!(error instanceof SupervisorError)) throw error;
    switch (error.code) {
      case 'already-running':
        return raise(failure('E_LOCK_BUSY', error.message));
      case 'socket-path-occupied':
      case 'socket-failed':
        return raise(failure('E_IO', error.message));
      case 'invalid-options':
        return raise(failure('E_CONFIG', error.message));
      case 'invalid-state':
        throw error;
    }
  }
  try {
    await new Promise<void>((done) => {
      if (signal.aborted) done();
      else signal.addEventListener('abort', () => done(), { once: true });
    });
  } finally {
    await supervisor.close();
  }
}
