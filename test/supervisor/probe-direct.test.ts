import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { healthFailFile } from '../support/agent/build-agent.js';
import { startSupervisedSandbox, type SupervisedSandbox } from '../support/supervised-sandbox.js';
import { FAST_HEALTH } from '../support/systemd/systemd-host.js';

/** The socket as the configuration names it (under `--root`) and as the agent is told it (the real path). */
const SOCKET = '/run/aks-flex-node-health.sock';
const MARKER = '/etc/aks-flex-node/agent-upgrade-activation.json';

/**
 * The direct path gated on an HTTP probe under the built-in supervisor: the compiled test agent
 * serves its health on a unix socket, and answers 503 while the test's file for its version
 * exists. A release whose probe fails, or that crashes inside its watch window, is rolled back
 * with E_UNHEALTHY; last-good stays the binary that ran.
 */
describe('health probe on the direct path under the supervisor', () => {
  let sandbox: SupervisedSandbox;
  const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  const quarantine = () =>
    (
      JSON.parse(readFileSync(sandbox.path('/etc/aks-flex-node/agent-upgrade-state.json'), 'utf8')) as {
        quarantine: string[];
      }
    ).quarantine;

  beforeAll(async () => {
    sandbox = await startSupervisedSandbox('agent-upgrade-probe-', (root) => ({
      agent: { args: ['agent', '--health-socket', join(root, SOCKET)] },
      health: {
        ...FAST_HEALTH,
        probe: { http: { socket: SOCKET, path: '/healthz' }, periodMs: 300, successThreshold: 2, failureThreshold: 3 },
      },
    }));
  }, 60_000);
  afterAll(async () => sandbox?.close());

  it('activates a release whose probe passes', async () => {
    const result = sandbox.cli('activate', sandbox.agent({ version: '2.0.0' }));
    expect({ status: result.status, code: result.doc.error?.code }).toEqual({ status: 0, code: undefined });
    expect(sandbox.link('current')).toBe('green');
    expect(await sandbox.running('green')).toBe(true);
    expect(existsSync(sandbox.path(SOCKET))).toBe(true);
  }, 60_000);

  it('rolls back a release whose probe fails: exit 3, E_UNHEALTHY, quarantined, last-good and its agent untouched', async () => {
    const candidate = sandbox.agent({ version: '3.0.0' });
    writeFileSync(healthFailFile(sandbox.path(SOCKET), '3.0.0'), '');
    const goodBinary = readFileSync(sandbox.slot('green'));
    const result = sandbox.cli('activate', candidate);
    expect({ status: result.status, code: result.doc.error?.code }).toEqual({ status: 3, code: 'E_UNHEALTHY' });
    expect({ current: sandbox.link('current'), lastGood: sandbox.link('last-good') }).toEqual({
      current: 'green',
      lastGood: 'green',
    });
    expect(readFileSync(sandbox.slot('green'))).toEqual(goodBinary);
    expect(quarantine()).toContain(digest(candidate));
    expect(existsSync(sandbox.path(MARKER))).toBe(false);
    expect(await sandbox.running('green')).toBe(true);
  }, 60_000);

  it('rolls back a release that passes the gate and crashes 4 s in, inside its watch window', async () => {
    const file = sandbox.path('/etc/aks-flex-node/agent-upgrade.json');
    const config = JSON.parse(readFileSync(file, 'utf8')) as { health: Record<string, unknown> };
    writeFileSync(file, JSON.stringify({ ...config, health: { ...config.health, watchMs: 8_000 } }));
    const candidate = sandbox.agent({ version: '4.0.0', behaviour: { crashAfterSeconds: 4 } });
    const result = sandbox.cli('activate', candidate);
    expect({ status: result.status, code: result.doc.error?.code }).toEqual({ status: 3, code: 'E_UNHEALTHY' });
    expect(sandbox.link('current')).toBe('green');
    expect(quarantine()).toContain(digest(candidate));
    expect(existsSync(sandbox.path('/etc/aks-flex-node/agent-upgrade-watch.json'))).toBe(false);
    expect(await sandbox.running('green')).toBe(true);
  }, 60_000);
});
