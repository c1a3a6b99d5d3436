import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestAgentBuild } from '../support/agent/build-agent.js';
import { startSupervisedSandbox, type SupervisedSandbox } from '../support/supervised-sandbox.js';
import { CLI } from '../support/systemd/systemd-host.js';
import { waitFor } from '../support/wait-for.js';

const SLOTS = '/usr/local/lib/aks-flex-node';
const MARKER = '/etc/aks-flex-node/agent-upgrade-activation.json';

/**
 * A direct activation interrupted during its health wait, with the built-in supervisor running
 * a real agent: a catchable signal rolls back before the command ends; a SIGKILL leaves the
 * marker, and the supervisor's on-failure hook (`<last-good> recover`) rolls back from it. And
 * an operator's rollback onto a broken last-good restores the binary that ran.
 */
describe('direct activation interrupted under the supervisor', () => {
  let sandbox: SupervisedSandbox;
  const agent = (build: TestAgentBuild) => sandbox.agent(build);
  const path = (hostPath: string) => sandbox.path(hostPath);
  const link = (name: 'current' | 'last-good') => sandbox.link(name);
  const cli = (...args: string[]) => sandbox.cli(...args);
  const running = (name: 'blue' | 'green') => sandbox.running(name);
  const statePath = () => path('/etc/aks-flex-node/agent-upgrade-state.json');
  const quarantine = () =>
    existsSync(statePath())
      ? (JSON.parse(readFileSync(statePath(), 'utf8')) as { quarantine: string[] }).quarantine
      : [];
  const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

  /**
   * Starts `activate CANDIDATE` and delivers `signal` in the health wait: once the candidate is
   * current and the supervisor no longer runs the previous slot (the restart was requested).
   * Signalled between the switch and the restart, the old agent would keep running untouched.
   */
  const interruptedActivation = async (candidate: string, signal: NodeJS.Signals) => {
    expect(await sandbox.hookIdle()).toBe(true);
    const before = link('current');
    const previous = sandbox.slot(before === 'blue' ? 'blue' : 'green');
    const child = spawn(process.execPath, [CLI, 'activate', candidate, '--root', sandbox.root, '--json'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    const restarted = async () => link('current') !== before && (await sandbox.services.mainExecutable()) !== previous;
    expect(await waitFor(restarted, 20_000)).toBe(true);
    child.kill(signal);
    const code = await exited;
    return { code, doc: JSON.parse(Buffer.concat(out).toString('utf8') || '{}') as { error?: { code: string } } };
  };

  beforeAll(async () => {
    sandbox = await startSupervisedSandbox('agent-upgrade-interrupted-');
  }, 60_000);

  afterAll(async () => sandbox?.close());

  it('SIGINT during the health wait: rolled back before exiting (exit 3, E_INTERRUPTED), not quarantined, no marker', async () => {
    const candidate = agent({ version: '2.0.0', behaviour: 'crash-on-start' });
    const result = await interruptedActivation(candidate, 'SIGINT');
    expect({ code: result.code, error: result.doc.error?.code }).toEqual({ code: 3, error: 'E_INTERRUPTED' });
    expect({ current: link('current'), marker: existsSync(path(MARKER)) }).toEqual({ current: 'blue', marker: false });
    expect(quarantine()).not.toContain(digest(candidate));
    expect(await running('blue')).toBe(true);
  }, 60_000);

  it('SIGKILL during the health wait: the marker stays, the crash loop runs the hook, recover rolls back and quarantines', async () => {
    const candidate = agent({ version: '3.0.0', behaviour: 'crash-on-start' });
    const result = await interruptedActivation(candidate, 'SIGKILL');
    expect(result.code).toBe(null);
    expect(await waitFor(() => link('current') === 'blue' && !existsSync(path(MARKER)), 40_000)).toBe(true);
    expect(quarantine()).toContain(digest(candidate));
    expect(await running('blue')).toBe(true);
  }, 60_000);

  it('rollback onto a broken last-good: last-good is quarantined and the binary that ran comes back (exit 3)', async () => {
    expect(cli('activate', agent({ version: '4.0.0' })).status).toBe(0);
    expect(await running('green')).toBe(true);
    expect(link('last-good')).toBe('blue');
    // Last-good's binary goes bad behind the upgrader's back (it is not the active slot).
    const broken = agent({ version: '1.0.1', behaviour: 'crash-on-start' });
    copyFileSync(broken, path(`${SLOTS}/aks-flex-node-blue`));
    const result = cli('rollback');
    expect({ status: result.status, code: result.doc.error?.code }).toEqual({ status: 3, code: 'E_UNHEALTHY' });
    expect(link('current')).toBe('green');
    expect(quarantine()).toContain(digest(broken));
    expect(await running('green')).toBe(true);
  }, 60_000);
});
