import { createServer, type Server } from 'node:net';
import { mkdirSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ServiceError } from '../../../src/domain/common/port-errors.js';
import { eventually, HEALTH, Host } from './fixtures.js';

describe('SupervisorServiceManager', () => {
  let host: Host;
  const servers: Server[] = [];
  beforeEach(() => {
    host = new Host();
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
    expect(await host.cleanup()).toEqual([]);
  });

  /** A fake peer on the socket that answers every connection with `reply` (or never, when null). */
  async function fakePeer(reply: string | null): Promise<void> {
    mkdirSync(host.path('run'), { recursive: true });
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      // Reading keeps the socket flowing, so a client that gives up closes it on this side too.
      socket.on('data', () => {
        if (reply !== null) socket.end(reply);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(host.socket, resolve));
  }

  async function failureOf(action: Promise<unknown>): Promise<unknown> {
    return action.then(
      () => 'no failure',
      (error: unknown) => (error instanceof ServiceError ? error.code : error),
    );
  }

  it('has nothing to converge and names itself', async () => {
    const manager = host.manager();
    expect(manager.name).toBe('supervisor');
    expect(await manager.convergeAssets()).toEqual({ changed: false });
    expect(await manager.assetsCurrent()).toBe(true);
  });

  it('treats a missing supervisor as an absent service that stays stopped', async () => {
    const manager = host.manager();
    expect(await manager.activity()).toBe('absent');
    expect(await manager.restart({ resetFailed: true })).toEqual({ restarted: false });
    await manager.scheduleRestart();
    expect(await manager.mainExecutable()).toBeNull();
    expect(await manager.waitHealthy(host.blue, { timeoutMs: 200, stableMs: 100, pollMs: 50 })).toEqual({
      kind: 'not-running',
    });
  });

  it('resets and restarts a failed agent, as the systemd adapter does', async () => {
    host.point(host.countingAgent('crash', 'exit 1'));
    const supervisor = host.supervisor();
    await supervisor.start();
    const manager = host.manager();
    expect(await eventually(async () => (await manager.activity()) === 'failed')).toBe(true);
    host.point(host.green);
    expect(await manager.restart()).toEqual({ restarted: true });
    expect(await manager.waitHealthy(host.green, HEALTH)).toEqual({ kind: 'healthy' });
    host.mainPid(supervisor);
  });

  it('reports a supervisor that does not answer as a timeout', async () => {
    await fakePeer(null);
    const manager = host.manager({ requestTimeoutMs: 200 });
    expect(await failureOf(manager.activity())).toBe('timeout');
    expect(await failureOf(manager.scheduleRestart())).toBe('timeout');
  });

  it('reports a reply of the wrong shape as a failed command', async () => {
    await fakePeer('{"ok":true,"state":"sleeping","mainPid":null}\n');
    expect(await failureOf(host.manager().activity())).toBe('command-failed');
  });

  it('reports a refusal from the supervisor as a failed command', async () => {
    await fakePeer('{"ok":false,"error":{"code":"internal","message":"broken"}}\n');
    expect(await failureOf(host.manager().mainExecutable())).toBe('command-failed');
  });
});
