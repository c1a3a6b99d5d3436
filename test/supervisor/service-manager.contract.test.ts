import { realpathSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import type { Supervisor } from '../../src/adapters/node/supervisor/supervisor.js';
import { SupervisorServiceManager } from '../../src/adapters/node/supervisor/supervisor-service-manager.js';
import { Host } from '../adapters/supervisor/fixtures.js';
import { buildTestAgent } from '../support/agent/build-agent.js';
import { makeScratch } from '../support/real-tree.js';
import { serviceManagerContract, type GivenState } from '../contracts/service-manager.contract.js';
import { SteppedClock } from '../contracts/service-manager.support.js';

/**
 * The supervisor adapter against a real Supervisor (the one `agent-upgrade supervise` runs, here
 * in-process with test-sized timings: restart after 100 ms, at most 3 starts in 10 s) and real
 * agent processes: copies of `sleep` as the healthy builds, the compiled test agent as the
 * crashing and exiting ones. A crash loop thus ends failed within a second, an agent exiting
 * after 1 s within about four.
 */
let agents: ReturnType<typeof makeScratch>;
let crashing: string;
let exiting: string;

beforeAll(() => {
  agents = makeScratch('sup-contract-agents-');
  crashing = realpathSync(buildTestAgent(agents.root, { version: '9.9.9', behaviour: 'crash-on-start' }));
  exiting = realpathSync(buildTestAgent(agents.root, { version: '8.8.8', behaviour: { crashAfterSeconds: 1 } }));
}, 120_000);
afterAll(() => agents?.cleanup());

serviceManagerContract('SupervisorServiceManager (real supervisor, real agents)', async () => {
  const host = new Host();
  const clock = new SteppedClock(new SystemClock());
  const services = new SupervisorServiceManager({ controlSocket: host.socket, clock });
  let supervisor: Supervisor | null = null;
  const startSupervisor = async (): Promise<void> => {
    if (supervisor !== null) await supervisor.close();
    supervisor = host.supervisor();
    await supervisor.start();
  };
  return {
    clock,
    builds: { blue: host.blue, green: host.green, crashing, exiting },
    health: { timeoutMs: 8_000, stableMs: 1_500, pollMs: 100 },
    settleMs: 8_000,
    scheduledWithinMs: 3_500,
    point: async (build) => host.point(build),
    given: async (state: GivenState) => {
      // No supervisor listening is an absent service; with one, the agent runs until stopped.
      if (state === 'absent') {
        await supervisor?.close();
        supervisor = null;
        return services;
      }
      await startSupervisor();
      if (state === 'inactive') await supervisor?.handle({ op: 'stop' });
      return services;
    },
    // The supervisor runs a scheduled try-restart itself, after the adapter's delay.
    runScheduledRestarts: async () => undefined,
    cleanup: async () => {
      const strays = await host.cleanup();
      if (strays.length > 0) throw new Error(`agents still running after the test: ${strays.join(', ')}`);
    },
  };
});
