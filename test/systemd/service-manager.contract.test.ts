import { copyFileSync, existsSync, mkdirSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import { SystemdServiceManager } from '../../src/adapters/node/systemd/systemd-service-manager.js';
import { systemdAssets } from '../../src/app/node/composition/service-platform.module.js';
import { buildTestAgent } from '../support/agent/build-agent.js';
import { SystemdWorld, TEST_IDENTITY, type SandboxHost } from '../support/systemd/systemd-host.js';
import { serviceManagerContract, type GivenState } from '../contracts/service-manager.contract.js';
import { SteppedClock } from '../contracts/service-manager.support.js';

/**
 * The systemd adapter against systemd booted in a private PID namespace, with the units it
 * renders from configuration (Restart=on-failure after 1 s, at most 3 starts in 120 s, the
 * recovery unit as OnFailure=, which does nothing without an upgrade record) and the compiled
 * test agent: a crash loop ends failed in about 3 s, an agent exiting after 1 s in about 6 s.
 */
let world: SystemdWorld;
let agents: { readonly blue: string; readonly green: string; readonly crashing: string; readonly exiting: string };

beforeAll(async () => {
  world = await SystemdWorld.create();
  const dir = world.agentsDir();
  agents = {
    blue: buildTestAgent(dir, { version: '1.0.0' }),
    green: buildTestAgent(dir, { version: '2.0.0' }),
    crashing: buildTestAgent(dir, { version: '9.9.9', behaviour: 'crash-on-start' }),
    exiting: buildTestAgent(dir, { version: '8.8.8', behaviour: { crashAfterSeconds: 1 } }),
  };
}, 120_000);
afterAll(async () => world?.close());

serviceManagerContract('SystemdServiceManager (private systemd, real agents)', async () => {
  const host = world.host();
  const { config, layout } = await host.configuration();
  const clock = new SteppedClock(new SystemClock());
  const services = new SystemdServiceManager({
    fs: new NodeFileSystem(),
    runner: host.systemd.runner(),
    clock,
    unit: config.service.unit,
    unitDir: layout.unitDir,
    assets: systemdAssets(config, layout, TEST_IDENTITY),
    procRoot: host.systemd.procRoot,
  });
  // Each build is copied into this host's slot directory, which also holds the recovery script.
  mkdirSync(dirname(layout.current), { mode: 0o750, recursive: true });
  const install = (build: string, name: string): string => {
    const path = join(dirname(layout.current), name);
    copyFileSync(build, path);
    return realpathSync(path);
  };
  const builds = {
    blue: install(agents.blue, basename(layout.blue)),
    green: install(agents.green, basename(layout.green)),
    crashing: install(agents.crashing, 'contract-crashing'),
    exiting: install(agents.exiting, 'contract-exiting'),
  };
  const unitFile = join(layout.unitDir, config.service.unit);
  return {
    clock,
    builds,
    health: { timeoutMs: 12_000, stableMs: 1_500, pollMs: 250 },
    settleMs: 15_000,
    scheduledWithinMs: 5_000,
    point: async (build) => {
      const next = `${layout.current}.next`;
      rmSync(next, { force: true });
      symlinkSync(basename(build), next);
      renameSync(next, layout.current);
    },
    given: async (state: GivenState) => {
      if (state === 'absent') {
        if (existsSync(unitFile)) throw new Error('the unit is installed already: absent comes first');
        return services;
      }
      await services.convergeAssets();
      // Enqueued for the crash loop: with Type=exec the start job itself may fail (or not, by timing).
      if (state === 'crash-loop') systemctl(host, 'restart', '--no-block', config.service.unit);
      else systemctl(host, state === 'inactive' ? 'stop' : 'restart', config.service.unit);
      return services;
    },
    // systemd runs the transient unit itself once its timer elapsed.
    runScheduledRestarts: async () => undefined,
    cleanup: async () => {
      host.systemctl('stop', config.service.unit);
      host.systemctl('reset-failed', config.service.unit);
    },
  };
});

function systemctl(host: SandboxHost, ...args: string[]): void {
  const result = host.systemctl(...args);
  if (result.status !== 0) throw new Error(`systemctl ${args.join(' ')} failed: ${result.stderr.trim()}`);
}
