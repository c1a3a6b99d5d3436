import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { failure } from '../../../domain/common/failure.js';
import { raise } from '../../common/failure-signal.js';
import type { Upgrader } from '../upgrader.js';

/** How the demo's agent is run: by the built-in supervisor, or by the host's systemd. */
export interface DemoPlatform {
  readonly name: string;
  /** The configuration of the sandbox host (merged over the demo's common settings). */
  configFor(sandbox: string): Record<string, unknown>;
  /** Starts the agent after migration. */
  start(upgrader: Upgrader): Promise<void>;
  /** Stops the agent and removes whatever the platform installed outside the sandbox. */
  stop(): Promise<void>;
}

/** The supervisor runs in this process; everything lives under the sandbox (`--root`). */
export function supervisorPlatform(): DemoPlatform {
  const stopping = new AbortController();
  let supervising: Promise<unknown> = Promise.resolve();
  return {
    name: 'the built-in supervisor',
    configFor: (sandbox) => ({
      root: sandbox,
      service: { manager: 'supervisor', restartSec: 1, startLimitBurst: 3, startLimitIntervalSec: 60 },
    }),
    async start(upgrader) {
      supervising = upgrader.supervise(stopping.signal);
    },
    async stop() {
      stopping.abort();
      await supervising;
    },
  };
}

/**
 * The host's systemd runs the agent as a runtime unit (`/run/systemd/system`, gone at reboot)
 * with a name unique to this run; the binaries, links and state stay under the sandbox. Needs
 * root and a running systemd.
 */
export function systemdPlatform(euid: number): DemoPlatform {
  if (euid !== 0) raise(failure('E_NOT_ROOT', '--systemd installs a unit: run the demo as root'));
  if (!existsSync('/run/systemd/system'))
    raise(failure('E_CONFIG', '--systemd needs a running systemd (/run/systemd/system is missing)'));
  let unit = '';
  let recoveryUnit = '';
  const systemctl = (...args: string[]) => execFileSync('systemctl', args, { stdio: 'ignore', timeout: 120_000 });
  return {
    name: 'systemd',
    configFor(sandbox) {
      const id = basename(sandbox)
        .replace(/[^A-Za-z0-9]/g, '')
        .slice(-12);
      unit = `agent-upgrade-demo-${id}.service`;
      recoveryUnit = `agent-upgrade-demo-${id}-recovery.service`;
      const at = (path: string) => join(sandbox, path);
      return {
        root: '/',
        paths: {
          entry: at('/usr/local/bin/aks-flex-node'),
          slotDir: at('/usr/local/lib/aks-flex-node'),
          record: at('/etc/aks-flex-node/agent-upgrade-signal.json'),
          state: at('/etc/aks-flex-node/agent-upgrade-state.json'),
          lock: at('/run/aks-flex-node-agent-upgrade.lock'),
          daemonState: at('/etc/aks-flex-node/daemon-state.json'),
          unitDir: '/run/systemd/system',
        },
        service: {
          manager: 'systemd',
          unit,
          recoveryUnit,
          restartSec: 1,
          startLimitBurst: 3,
          startLimitIntervalSec: 60,
        },
      };
    },
    async start() {
      systemctl('start', unit);
    },
    async stop() {
      if (unit === '') return;
      for (const name of [unit, recoveryUnit]) {
        try {
          systemctl('stop', name);
        } catch {
          // already stopped
        }
        rmSync(join('/run/systemd/system', name), { force: true });
      }
      try {
        systemctl('daemon-reload');
        systemctl('reset-failed', unit, recoveryUnit);
      } catch {
        // nothing left to reset
      }
    },
  };
}
