import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  agentRecordPath,
  describeProcess,
  writeAgentRecord,
  type AgentRecord,
} from '../../../src/adapters/node/supervisor/agent-record.js';
import { ServiceError } from '../../../src/domain/common/port-errors.js';
import { eventually, Host, isGone, isRunning, lines, numbers } from './fixtures.js';
import { runningFrom } from '../../support/processes.js';

/**
 * What a supervisor killed by SIGKILL leaves: an agent it did not start from this process's
 * point of view — these are the test's children, but to a supervisor they are strangers found
 * only through the record — leading its own session and process group.
 */
describe('Supervisor and the agent a dead supervisor left behind', () => {
  let host: Host;
  /** Leaders of the groups this test started, stopped in afterEach whatever happened. */
  const groups: number[] = [];
  beforeEach(() => {
    host = new Host();
    mkdirSync(host.path('run'), { recursive: true });
  });
  afterEach(async () => {
    for (const leader of groups.splice(0)) {
      try {
        process.kill(-leader, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
    expect(await host.cleanup()).toEqual([]);
  });

  /** Starts `script` as a session leader, waits until it has exec'd the blue slot, returns its PID. */
  async function leftBehind(script: string): Promise<number> {
    const child = spawn('/bin/sh', ['-c', script], { detached: true, stdio: 'ignore' });
    const pid = child.pid ?? 0;
    groups.push(pid);
    host.seenPids.add(pid);
    expect(await eventually(() => runningFrom(host.blue).includes(pid))).toBe(true);
    return pid;
  }

  function record(pid: number, change: Partial<AgentRecord> = {}): void {
    const described = describeProcess(pid);
    if (described === null) throw new Error(`process ${pid} is gone`);
    writeAgentRecord(agentRecordPath(host.socket), { ...described, ...change });
  }

  it('stops a recorded agent and everything in its group before starting its own: one agent runs', async () => {
    const pids = host.path('pids');
    const orphan = await leftBehind(`${host.blue} 1000 & echo $! >> ${pids}; exec ${host.blue} 1000`);
    expect(await eventually(() => lines(pids) === 1)).toBe(true);
    const [member = 0] = numbers(pids);
    host.seenPids.add(member);
    record(orphan);
    const supervisor = host.supervisor();
    await supervisor.start();
    const mainPid = host.mainPid(supervisor);
    expect(await isGone(orphan)).toBe(true);
    expect(await isGone(member)).toBe(true);
    expect(runningFrom(host.blue)).toEqual([mainPid]);
  });

  it('kills a recorded agent that ignores SIGTERM once stopTimeoutMs ran out', async () => {
    const orphan = await leftBehind(`trap '' TERM; exec ${host.blue} 1000`);
    record(orphan);
    const supervisor = host.supervisor({ stopTimeoutMs: 300 });
    await supervisor.start();
    expect(await isGone(orphan)).toBe(true);
    expect(runningFrom(host.blue)).toEqual([host.mainPid(supervisor)]);
  });

  it('stops what the recorded agent forked after the agent itself died by its parent-death signal', async () => {
    const pids = host.path('pids');
    const orphan = await leftBehind(`${host.blue} 1000 & echo $! >> ${pids}; exec ${host.blue} 1000`);
    expect(await eventually(() => lines(pids) === 1)).toBe(true);
    const [member = 0] = numbers(pids);
    host.seenPids.add(member);
    record(orphan);
    process.kill(orphan, 'SIGKILL');
    expect(await isGone(orphan)).toBe(true);
    expect(isRunning(member)).toBe(true);
    const supervisor = host.supervisor();
    await supervisor.start();
    expect(await isGone(member)).toBe(true);
    expect(runningFrom(host.blue)).toEqual([host.mainPid(supervisor)]);
  });

  it('leaves alone a process whose PID matches a record of another start time or another boot', async () => {
    const bystander = await leftBehind(`exec ${host.blue} 1000`);
    const own = describeProcess(bystander);
    for (const change of [{ startTime: (own?.startTime ?? 0) + 1 }, { bootId: 'another-boot' }]) {
      record(bystander, change);
      const supervisor = host.supervisor();
      await supervisor.start();
      const mainPid = host.mainPid(supervisor);
      expect(isRunning(bystander)).toBe(true);
      expect(runningFrom(host.blue).sort()).toEqual([bystander, mainPid].sort());
      await supervisor.close();
    }
  });

  it('reports an agent outliving its supervisor as unknown, with its executable, and refuses to restart it', async () => {
    const orphan = await leftBehind(`exec ${host.blue} 1000`);
    record(orphan);
    const manager = host.manager();
    const code = (action: Promise<unknown>) =>
      action.then(
        () => 'no failure',
        (error: unknown) => (error instanceof ServiceError ? error.code : error),
      );
    expect(await manager.activity()).toBe('unknown');
    expect(await manager.mainExecutable()).toBe(host.blue);
    expect(await code(manager.restart({ resetFailed: true }))).toBe('command-failed');
    expect(await code(manager.scheduleRestart())).toBe('command-failed');
    expect(isRunning(orphan)).toBe(true);

    process.kill(orphan, 'SIGKILL');
    expect(await isGone(orphan)).toBe(true);
    expect(await manager.activity()).toBe('absent');
    expect(await manager.mainExecutable()).toBeNull();
  });
});
