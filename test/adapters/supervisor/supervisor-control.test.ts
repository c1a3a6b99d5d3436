import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requestSupervisor } from '../../../src/adapters/node/supervisor/control-client.js';
import { REQUEST_MAX_BYTES } from '../../../src/adapters/node/supervisor/control-protocol.js';
import { SupervisorError } from '../../../src/adapters/node/supervisor/supervisor-error.js';
import { eventually, Host, isGone, lines, numbers, rawExchange, sleep } from './fixtures.js';

describe('Supervisor control socket', () => {
  let host: Host;
  beforeEach(() => {
    host = new Host();
  });
  afterEach(async () => {
    expect(await host.cleanup()).toEqual([]);
  });

  it('creates the socket with mode 0600 and removes it on close', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    const stat = lstatSync(host.socket);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
    host.mainPid(supervisor);
    await supervisor.close();
    expect(existsSync(host.socket)).toBe(false);
    expect(await host.manager().activity()).toBe('absent');
  });

  it('refuses to start a second supervisor on a live socket, without starting an agent', async () => {
    const agent = host.countingAgent('agent', 'exec sleep 1000');
    const first = host.supervisor({ execStart: agent, args: [] });
    await first.start();
    expect(await eventually(() => host.starts() === 1)).toBe(true);
    const second = host.supervisor({ execStart: agent, args: [] });
    const refusal = await second.start().catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SupervisorError);
    expect((refusal as SupervisorError).code).toBe('already-running');
    await sleep(300);
    expect(host.starts()).toBe(1);
    expect(second.status()).toMatchObject({ state: 'inactive', mainPid: null, failureHook: 'idle' });
    expect(await host.manager().activity()).toBe('active');
    expect(host.mainPid(first)).not.toBeNull();
  });

  it('replaces a socket file left by a dead supervisor', async () => {
    // A process that binds the socket and dies by SIGKILL leaves the file behind, unanswered.
    const script = `require('net').createServer().listen(${JSON.stringify(host.socket)}, () => process.kill(process.pid, 'SIGKILL'))`;
    spawnSync('mkdir', ['-p', host.path('run')]);
    spawnSync(process.execPath, ['-e', script], { timeout: 5000 });
    expect(lstatSync(host.socket).isSocket()).toBe(true);
    expect(await host.manager().activity()).toBe('absent');
    const supervisor = host.supervisor();
    await supervisor.start();
    expect(await host.manager().activity()).toBe('active');
    host.mainPid(supervisor);
  });

  it('never replaces a path that is not a socket', async () => {
    spawnSync('mkdir', ['-p', host.path('run')]);
    writeFileSync(host.socket, 'precious');
    const refusal = await host
      .supervisor()
      .start()
      .catch((error: unknown) => error);
    expect((refusal as SupervisorError).code).toBe('socket-path-occupied');
    expect(readFileSync(host.socket, 'utf8')).toBe('precious');
  });

  it('answers malformed, unknown and oversized requests with a failure code', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    host.mainPid(supervisor);
    const codeOf = async (bytes: string): Promise<unknown> => {
      const { text } = await rawExchange(host.socket, bytes);
      return (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    };
    expect(await codeOf('{not json\n')).toBe('bad-request');
    expect(await codeOf('{"op":"reboot"}\n')).toBe('unknown-op');
    expect(await codeOf('{"op":"restart","resetfailed":true}\n')).toBe('bad-request');
    expect(await codeOf('{"op":"try-restart","delayMs":-1}\n')).toBe('bad-request');
    expect(await codeOf(`{"op":"status","pad":"${'x'.repeat(REQUEST_MAX_BYTES)}"}\n`)).toBe('request-too-large');
    // A request ended by a half-close instead of a newline is still answered.
    const status = JSON.parse((await rawExchange(host.socket, '{"op":"status"}', 3000, true)).text) as unknown;
    expect(status).toMatchObject({ ok: true, state: 'active' });
    expect(supervisor.status().state).toBe('active');
  });

  it('drops a client that sends nothing within the read timeout', async () => {
    const supervisor = host.supervisor({ controlReadTimeoutMs: 200 });
    await supervisor.start();
    host.mainPid(supervisor);
    const started = Date.now();
    const exchange = await rawExchange(host.socket, null, 3000);
    expect(exchange.closedByPeer).toBe(true);
    expect(exchange.text).toBe('');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('keeps an operator-stopped agent stopped on restart, and starts it on start', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    const pid = host.mainPid(supervisor) ?? 0;
    expect(await requestSupervisor(host.socket, { op: 'stop' }, 5000)).toEqual({ ok: true, stopped: true });
    expect(await isGone(pid)).toBe(true);
    expect(supervisor.status()).toMatchObject({ state: 'inactive', mainPid: null, failureHook: 'idle' });
    const manager = host.manager();
    expect(await manager.restart()).toEqual({ restarted: false });
    expect(await requestSupervisor(host.socket, { op: 'restart', resetFailed: true }, 5000)).toEqual({
      ok: true,
      restarted: false,
    });
    expect(supervisor.status()).toMatchObject({ state: 'inactive', mainPid: null, failureHook: 'idle' });
    expect(await requestSupervisor(host.socket, { op: 'start' }, 5000)).toEqual({ ok: true, started: true });
    expect(await manager.mainExecutable()).toBe(host.blue);
    expect(await requestSupervisor(host.socket, { op: 'start' }, 5000)).toEqual({ ok: true, started: false });
    host.mainPid(supervisor);
  });

  it('restarts after the try-restart delay, replying at once', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    const oldPid = host.mainPid(supervisor);
    host.point(host.green);
    const started = Date.now();
    await host.manager({ restartDelayMs: 400 }).scheduleRestart();
    expect(Date.now() - started).toBeLessThan(300);
    expect(host.mainPid(supervisor)).toBe(oldPid);
    expect(await eventually(async () => (await host.manager().mainExecutable()) === host.green)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(host.mainPid(supervisor)).not.toBe(oldPid);
  });

  it('leaves an agent stopped before the try-restart delay ran out stopped', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    host.mainPid(supervisor);
    await host.manager({ restartDelayMs: 200 }).scheduleRestart();
    expect(await requestSupervisor(host.socket, { op: 'stop' }, 5000)).toEqual({ ok: true, stopped: true });
    await sleep(600);
    expect(supervisor.status()).toMatchObject({ state: 'inactive', mainPid: null, failureHook: 'idle' });
  });

  it('leaves a failed agent failed when a try-restart fires', async () => {
    const marker = host.path('hook-ran');
    host.point(host.countingAgent('crash', 'exit 1'));
    const supervisor = host.supervisor({
      onFailure: { command: host.script('hook', `echo ran >> ${marker}`), args: [], timeoutMs: 5000 },
    });
    await supervisor.start();
    expect(await eventually(() => supervisor.status().state === 'failed' && lines(marker) === 1)).toBe(true);
    await host.manager({ restartDelayMs: 200 }).scheduleRestart();
    host.point(host.blue);
    await sleep(500);
    expect(supervisor.status()).toMatchObject({ state: 'failed', mainPid: null, failureHook: 'idle' });
    expect(host.starts()).toBe(3);
    // A restart attempt would have been refused by the start limit and failed again, running the hook again.
    expect(lines(marker)).toBe(1);
  });

  it('kills an on-failure hook that outlives its timeout, with its whole group', async () => {
    const pids = host.path('pids');
    const hook = host.script('hook', `echo $$ >> ${pids}\nsleep 1000 &\necho $! >> ${pids}\nwait`);
    host.point(host.countingAgent('crash', 'exit 1'));
    const supervisor = host.supervisor({ onFailure: { command: hook, args: [], timeoutMs: 300 } });
    await supervisor.start();
    expect(await eventually(() => lines(pids) === 2)).toBe(true);
    expect(supervisor.status().failureHook).toBe('running');
    const [hookPid, grandchild] = numbers(pids);
    expect(await isGone(hookPid ?? 0, 3000)).toBe(true);
    expect(await isGone(grandchild ?? 0, 3000)).toBe(true);
    expect(supervisor.status().state).toBe('failed');
    expect(await eventually(() => supervisor.status().failureHook === 'idle')).toBe(true);
  });

  it('replies shutting-down once closed and starts nothing', async () => {
    const supervisor = host.supervisor();
    await supervisor.start();
    host.mainPid(supervisor);
    await supervisor.close();
    expect(await supervisor.handle({ op: 'start' })).toMatchObject({ ok: false, error: { code: 'shutting-down' } });
    expect(supervisor.status()).toMatchObject({ state: 'inactive', mainPid: null, failureHook: 'idle' });
  });
});
