import { setImmediate as turn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../../src/adapters/common/memory/memory-clock.js';
import { AgentUnit, type AgentLaunch, type AgentProcess } from '../../../src/adapters/node/supervisor/agent-unit.js';
import type { ExitStatus } from '../../../src/adapters/node/supervisor/process-group.js';
import { StartLimit } from '../../../src/adapters/node/supervisor/start-limit.js';
import { SILENT_LOGGER } from '../../../src/adapters/node/supervisor/supervisor-options.js';

const SETTINGS = { restartDelayMs: 100, startLimitBurst: 3, startLimitIntervalMs: 1_000, stopTimeoutMs: 50 } as const;
const CRASH: ExitStatus = { code: 1, signal: null };

/** A stand-in agent process: it runs until the test makes it exit, or the unit stops it. */
class FakeAgent implements AgentProcess {
  readonly exited: Promise<ExitStatus>;
  stopRequested = false;
  private finish: (status: ExitStatus) => void = () => undefined;

  constructor(
    readonly pid: number,
    readonly startedAtMs: number,
  ) {
    this.exited = new Promise((resolve) => {
      this.finish = resolve;
    });
  }

  exit(status: ExitStatus): void {
    this.finish(status);
  }

  async stop(): Promise<boolean> {
    this.stopRequested = true;
    this.finish({ code: null, signal: 'SIGTERM' });
    return true;
  }
}

/**
 * The supervisor's unit with a launcher that spawns nothing, on the memory clock: each restart
 * delay and each start-limit window is virtual time, so the test reads when each start happened.
 */
function world(overrides: { readonly restartDelayMs?: number } = {}) {
  const clock = new MemoryClock();
  const epochMs = clock.monotonicMs();
  const agents: FakeAgent[] = [];
  let failures = 0;
  let failNextLaunch = false;
  const launch = async (): Promise<AgentLaunch> => {
    if (failNextLaunch) {
      failNextLaunch = false;
      return { kind: 'failed' };
    }
    const agent = new FakeAgent(100 + agents.length, clock.monotonicMs() - epochMs);
    agents.push(agent);
    return { kind: 'spawned', agent };
  };
  const unit = new AgentUnit({
    clock,
    ...SETTINGS,
    ...overrides,
    launch,
    onFailed: () => {
      failures += 1;
    },
    logger: SILENT_LOGGER,
  });
  unit.open();
  return {
    clock,
    unit,
    /** When each start happened, in virtual ms since the unit was created. */
    startTimes: () => agents.map((agent) => agent.startedAtMs),
    latest: (): FakeAgent => {
      const agent = agents.at(-1);
      if (agent === undefined) throw new Error('no agent was started');
      return agent;
    },
    failures: () => failures,
    failNextLaunch: () => {
      failNextLaunch = true;
    },
    elapsedMs: () => clock.monotonicMs() - epochMs,
  };
}

/** Lets the unit react: exits, fired timers and queued tasks all settle within a few turns. */
async function settle(): Promise<void> {
  for (let turns = 0; turns < 10; turns += 1) await turn();
}

async function crashLoop(host: ReturnType<typeof world>, crashes: number): Promise<void> {
  for (let crash = 0; crash < crashes; crash += 1) {
    host.latest().exit(CRASH);
    await settle();
  }
}

describe('the supervisor unit on the memory clock', () => {
  it('restarts a crashed agent after restartDelayMs, and a start limit hit ends in failed with one hook run', async () => {
    const host = world();
    expect(await host.unit.start()).toEqual({ ok: true, started: true });
    await crashLoop(host, 3);
    expect(host.startTimes()).toEqual([0, 100, 200]);
    // The fourth start, 100 ms after the third, would be the fourth within 1 s: refused.
    expect(host.unit.status()).toMatchObject({ state: 'failed', mainPid: null });
    expect(host.elapsedMs()).toBe(300);
    expect(host.failures()).toBe(1);
  });

  it('counts automatic restarts as systemd counts NRestarts: a crash adds one, a manual restart with reset zeroes it', async () => {
    const host = world();
    await host.unit.start();
    const { runId } = host.unit.status();
    await crashLoop(host, 2);
    expect(host.unit.status()).toMatchObject({ state: 'active', restarts: 2, runId });
    expect(await host.unit.restart(true)).toEqual({ ok: true, restarted: true });
    expect(host.unit.status()).toMatchObject({ state: 'active', restarts: 0, runId });
    expect(world().unit.status().runId).not.toBe(runId);
  });

  // The limit counts a duration: a wall clock set back (or forward) between starts must neither
  // forget the starts counted so far nor keep them longer (docs/protocol.md#the-two-clocks).
  it.each([86_400_000, -86_400_000])(
    'a wall-clock step of %i ms before every crash changes neither the start times nor the limit',
    async (deltaMs) => {
      const host = world();
      await host.unit.start();
      for (let crash = 0; crash < 3; crash += 1) {
        host.clock.stepWall(deltaMs);
        host.latest().exit(CRASH);
        await settle();
      }
      expect(host.startTimes()).toEqual([0, 100, 200]);
      expect(host.unit.status()).toMatchObject({ state: 'failed', mainPid: null });
      expect(host.failures()).toBe(1);
    },
  );

  it('a crash loop slower than the start-limit window never fails', async () => {
    const host = world({ restartDelayMs: 400 });
    await host.unit.start();
    await crashLoop(host, 5);
    // Starts 400 ms apart: never more than three within any 1 s.
    expect(host.startTimes()).toEqual([0, 400, 800, 1_200, 1_600, 2_000]);
    expect(host.unit.status().state).toBe('active');
    expect(host.failures()).toBe(0);
  });

  it('a failed start is restarted and counted like a crash', async () => {
    const host = world();
    host.failNextLaunch();
    expect(await host.unit.start()).toEqual({ ok: true, started: true });
    await settle();
    expect(host.startTimes()).toEqual([100]);
    await crashLoop(host, 2);
    expect(host.unit.status().state).toBe('failed');
  });

  it('a restart with resetFailed forgets the counted starts; without it, a failed unit refuses', async () => {
    const host = world();
    await host.unit.start();
    await crashLoop(host, 3);
    expect(host.unit.status().state).toBe('failed');
    expect(await host.unit.restart(false)).toMatchObject({ ok: false, error: { code: 'start-limit-hit' } });
    expect(await host.unit.restart(true)).toEqual({ ok: true, restarted: true });
    expect(host.unit.status()).toMatchObject({ state: 'active', mainPid: host.latest().pid });
  });

  it('a clean exit is not restarted, and a stop cancels a pending restart', async () => {
    const clean = world();
    await clean.unit.start();
    clean.latest().exit({ code: 0, signal: null });
    await settle();
    expect(clean.unit.status()).toMatchObject({ state: 'inactive', mainPid: null });
    expect(clean.startTimes()).toEqual([0]);

    const stopped = world();
    await stopped.unit.start();
    stopped.latest().exit(CRASH);
    // One turn lets the unit see the exit: on the memory clock the restart delay ends in the next.
    await Promise.resolve();
    expect(stopped.unit.status().state).toBe('activating');
    expect(await stopped.unit.stop()).toEqual({ ok: true, stopped: true });
    await settle();
    expect(stopped.unit.status()).toMatchObject({ state: 'inactive', mainPid: null });
    expect(stopped.startTimes()).toEqual([0]);
  });

  it('try-restart runs after its delay, and leaves an agent stopped meanwhile stopped', async () => {
    const host = world();
    await host.unit.start();
    expect(host.unit.tryRestartAfter(2_000)).toEqual({ ok: true, scheduled: true });
    await settle();
    expect(host.startTimes()).toEqual([0, 2_000]);
    expect(host.unit.status().state).toBe('active');

    host.unit.tryRestartAfter(2_000);
    await host.unit.stop();
    await settle();
    expect(host.startTimes()).toEqual([0, 2_000]);
    expect(host.unit.status().state).toBe('inactive');
  });

  it('once closed it stops the agent, refuses requests and runs no timer', async () => {
    const host = world();
    await host.unit.start();
    host.latest().exit(CRASH);
    host.unit.tryRestartAfter(500);
    await host.unit.close();
    await settle();
    expect(host.unit.status()).toMatchObject({ state: 'inactive', mainPid: null });
    expect(host.startTimes()).toEqual([0]);
    expect(await host.unit.restart(true)).toMatchObject({ ok: false, error: { code: 'shutting-down' } });
    expect(host.unit.tryRestartAfter(10)).toMatchObject({ ok: false, error: { code: 'shutting-down' } });
  });
});

describe('StartLimit', () => {
  it('refuses the start that would make more than burst within the interval, a sliding window', () => {
    const limit = new StartLimit(2, 1_000);
    expect([0, 10, 20, 999, 1_010, 1_011, 1_012].map((nowMs) => limit.tryStart(nowMs))).toEqual([
      true,
      true,
      false,
      false,
      true,
      true,
      false,
    ]);
  });

  it('an interval of 0 disables it; reset forgets the counted starts', () => {
    const off = new StartLimit(1, 0);
    expect([0, 0, 0].map((nowMs) => off.tryStart(nowMs))).toEqual([true, true, true]);
    const limit = new StartLimit(1, 1_000);
    expect(limit.tryStart(0)).toBe(true);
    expect(limit.tryStart(1)).toBe(false);
    limit.reset();
    expect(limit.tryStart(2)).toBe(true);
  });

  it('a clock set back forgets the starts "in the future" instead of keeping the agent failed', () => {
    const limit = new StartLimit(1, 60_000);
    expect(limit.tryStart(1_000_000)).toBe(true);
    expect(limit.tryStart(1_000_001)).toBe(false);
    expect(limit.tryStart(10)).toBe(true);
  });
});
