import { realpathSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSupervisor } from '../../../src/adapters/node/supervisor/control-client.js';
import { eventually, HEALTH, Host, isGone, isRunning, lines, numbers, sleep } from './fixtures.js';

/** The interpreter a `#!/bin/sh` agent's main process runs, as /proc/<pid>/exe reports it. */
const SHELL = realpathSync('/bin/sh');

describe('Supervisor with real agents', () => {
  let host: Host;
  beforeEach(() => {
    host = new Host();
  });
  afterEach(async () => {
    expect(await host.cleanup()).toEqual([]);
  });

  it('runs the current slot and reports it healthy', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    const manager = host.manager();
    expect(await manager.waitHealthy(host.blue, HEALTH)).toEqual({ kind: 'healthy' });
    expect(await manager.mainExecutable()).toBe(host.blue);
    expect(await manager.activity()).toBe('active');
    expect(host.mainPid(supervisor)).not.toBeNull();
  });

  it('restarts into the slot the current link points at after a switch', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    const manager = host.manager();
    expect(await manager.mainExecutable()).toBe(host.blue);
    const oldPid = host.mainPid(supervisor);
    host.point(host.green);
    expect(await manager.restart()).toEqual({ restarted: true });
    expect(await manager.mainExecutable()).toBe(host.green);
    expect(await manager.waitHealthy(host.green, HEALTH)).toEqual({ kind: 'healthy' });
    expect(host.mainPid(supervisor)).not.toBe(oldPid);
    expect(await isGone(oldPid ?? 0)).toBe(true);
  });

  it('restarts an agent killed by a signal it did not send', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    const firstPid = host.mainPid(supervisor) ?? 0;
    process.kill(firstPid, 'SIGKILL');
    expect(
      await eventually(() => supervisor.status().state === 'active' && host.mainPid(supervisor) !== firstPid),
    ).toBe(true);
    expect(await host.manager().mainExecutable()).toBe(host.blue);
  });

  it('leaves an agent that exited 0 inactive and does not restart it', async () => {
    const agent = host.countingAgent('clean-exit', 'exit 0');
    const supervisor = host.supervisor({ execStart: agent, args: [] });
    await supervisor.start();
    expect(await eventually(() => supervisor.status().state === 'inactive')).toBe(true);
    await sleep(FAST_SETTLE_MS);
    expect(host.starts()).toBe(1);
    const manager = host.manager();
    expect(await manager.activity()).toBe('inactive');
    expect(await manager.restart()).toEqual({ restarted: false });
    expect(supervisor.status()).toMatchObject({ state: 'inactive', mainPid: null, failureHook: 'idle' });
    expect(host.starts()).toBe(1);
  });

  it('gives up after the start limit, runs the hook exactly once, and recovers with resetFailed', async () => {
    const marker = host.path('hook-ran');
    const hook = host.script('hook', `echo ran >> ${marker}`);
    const crashing = host.countingAgent('crash', 'exit 1');
    host.point(crashing);
    const supervisor = host.supervisor({ onFailure: { command: hook, args: [], timeoutMs: 5000 } });
    await supervisor.start();
    const manager = host.manager();
    expect(await eventually(() => supervisor.status().state === 'failed')).toBe(true);
    expect(await manager.activity()).toBe('failed');
    expect(await eventually(() => lines(marker) === 1)).toBe(true);
    await sleep(FAST_SETTLE_MS);
    expect(lines(marker)).toBe(1);
    // One initial start and burst−1 restarts: the (burst+1)-th start was refused.
    expect(host.starts()).toBe(3);
    // The health wait ends at once instead of running out its timeout.
    const started = Date.now();
    expect(await manager.waitHealthy(host.blue, { ...HEALTH, timeoutMs: 20_000 })).toMatchObject({ kind: 'unhealthy' });
    expect(Date.now() - started).toBeLessThan(2000);

    // Without the reset the start limit still refuses, and the supervisor stays failed.
    host.point(host.blue);
    const refused = await requestSupervisor(host.socket, { op: 'restart' }, 5000);
    expect(refused).toMatchObject({ ok: false, error: { code: 'start-limit-hit' } });
    expect(supervisor.status().state).toBe('failed');

    const recovered = await requestSupervisor(host.socket, { op: 'restart', resetFailed: true }, 5000);
    expect(recovered).toEqual({ ok: true, restarted: true });
    expect(await manager.waitHealthy(host.blue, HEALTH)).toEqual({ kind: 'healthy' });
    host.mainPid(supervisor);
  });

  it('runs the hook once more when the agent fails again while the hook runs, and no more', async () => {
    const marker = host.path('hook-ran');
    const release = host.path('release');
    // The hook holds on (bounded) until the test lets it end: the second failure lands inside it.
    const hook = host.script(
      'hook',
      `echo ran >> ${marker}\nfor i in $(seq 200); do [ -e ${release} ] && break; sleep 0.05; done`,
    );
    host.point(host.countingAgent('crash', 'exit 1'));
    const supervisor = host.supervisor({ onFailure: { command: hook, args: [], timeoutMs: 20_000 } });
    await supervisor.start();
    expect(await eventually(() => lines(marker) === 1)).toBe(true);
    const restarted = await requestSupervisor(host.socket, { op: 'restart', resetFailed: true }, 5000);
    expect(restarted).toEqual({ ok: true, restarted: true });
    expect(await eventually(() => host.starts() === 6 && supervisor.status().state === 'failed')).toBe(true);
    expect({ hook: supervisor.status().failureHook, runs: lines(marker) }).toEqual({ hook: 'running', runs: 1 });
    writeFileSync(release, '');
    expect(await eventually(() => lines(marker) === 2)).toBe(true);
    expect(await eventually(() => supervisor.status().failureHook === 'idle')).toBe(true);
    await sleep(FAST_SETTLE_MS);
    expect(lines(marker)).toBe(2);
  });

  it('lets the on-failure hook switch back and restart the agent over the control socket', async () => {
    const marker = host.path('hook-ran');
    // The recovery a real hook performs: select the good slot, then restart with resetFailed.
    const client = `const s=require('net').createConnection(process.env.AGENT_UPGRADE_SUPERVISOR_SOCKET);s.on('connect',()=>s.write(JSON.stringify({op:'restart',resetFailed:true})+'\\n'));s.on('data',d=>{process.stdout.write(d);s.destroy()});`;
    const hook = host.script(
      'hook',
      `echo ran >> ${marker}\nln -sfn ${host.green} ${host.current}\nexec ${process.execPath} -e "${client}" > ${host.path('hook-reply')}`,
    );
    host.point(host.countingAgent('crash', 'exit 1'));
    const supervisor = host.supervisor({ onFailure: { command: hook, args: [], timeoutMs: 5000 } });
    await supervisor.start();
    const manager = host.manager();
    // It fails first (a health wait then gives up at once), and comes back when the hook called in.
    expect(await eventually(() => lines(marker) === 1)).toBe(true);
    expect(await eventually(async () => (await manager.mainExecutable()) === host.green)).toBe(true);
    expect(await manager.waitHealthy(host.green, HEALTH)).toEqual({ kind: 'healthy' });
    expect(lines(marker)).toBe(1);
    expect(lines(host.path('hook-reply'))).toBe(1);
    host.mainPid(supervisor);
  });

  it('counts a start that cannot spawn (missing executable) as a failure', async () => {
    const marker = host.path('hook-ran');
    host.point(host.path('missing-slot'));
    const supervisor = host.supervisor({
      onFailure: { command: host.script('hook', `echo ran >> ${marker}`), args: [], timeoutMs: 5000 },
    });
    await supervisor.start();
    expect(await eventually(() => supervisor.status().state === 'failed')).toBe(true);
    expect(await eventually(() => lines(marker) === 1)).toBe(true);
    expect(await host.manager().mainExecutable()).toBeNull();
  });

  it('never reports an agent that keeps crashing as healthy', async () => {
    const flapping = host.countingAgent('flap', 'sleep 0.3\nexit 1');
    // A wide start limit: the supervisor keeps restarting, so only the PID changes reveal the crashes.
    const supervisor = host.supervisor({ execStart: flapping, args: [], startLimitBurst: 100 });
    await supervisor.start();
    const verdict = await host.manager().waitHealthy(SHELL, { timeoutMs: 1500, stableMs: 700, pollMs: 50 });
    expect(verdict).toMatchObject({ kind: 'unhealthy' });
    expect(host.starts()).toBeGreaterThanOrEqual(3);
  });

  it('kills the whole process group on close, with SIGKILL for an agent that ignores SIGTERM', async () => {
    const pids = host.path('pids');
    const stubborn = host.countingAgent(
      'stubborn',
      `trap '' TERM\nsleep 1000 &\necho $! >> ${pids}\nwhile :; do sleep 1; done`,
    );
    const supervisor = host.supervisor({ execStart: stubborn, args: [], stopTimeoutMs: 300 });
    await supervisor.start();
    expect(await eventually(() => lines(pids) === 1)).toBe(true);
    const mainPid = host.mainPid(supervisor) ?? 0;
    const started = Date.now();
    await supervisor.close();
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(isRunning(mainPid)).toBe(false);
    const [grandchild] = numbers(pids);
    expect(await isGone(grandchild ?? 0)).toBe(true);
    expect(supervisor.status()).toMatchObject({ state: 'inactive', mainPid: null, failureHook: 'idle' });
  });
});

/** Several restart delays: long enough for an unwanted restart to have happened. */
const FAST_SETTLE_MS = 500;
