import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SystemClock } from '../../src/adapters/node/system-clock.js';
import { SupervisorServiceManager } from '../../src/adapters/supervisor/supervisor-service-manager.js';
import { loadConfig } from '../../src/app/config/load-config.js';
import { NodeFileSystem } from '../../src/adapters/node/node-file-system.js';
import { buildTestAgent, type TestAgentBuild } from '../support/agent/build-agent.js';
import { makeScratch } from '../support/real-tree.js';
import { assertBuildCurrent, CLI, FAST_HEALTH, FAST_SERVICE } from '../support/systemd/systemd-host.js';
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
  let scratch: ReturnType<typeof makeScratch>;
  let supervisor: ChildProcess;
  let services: SupervisorServiceManager;
  const agent = (build: TestAgentBuild) => buildTestAgent(join(scratch.root, 'agents'), { ...build, embedsUpgrader: true });
  const path = (hostPath: string) => join(scratch.root, hostPath);
  const slot = (name: 'blue' | 'green') => realpathSync(path(`${SLOTS}/aks-flex-node-${name}`));
  const link = (name: 'current' | 'last-good') => readlinkSync(path(`${SLOTS}/aks-flex-node-${name}`)).replace(/^.*aks-flex-node-/, '');
  const statePath = () => path('/etc/aks-flex-node/agent-upgrade-state.json');
  const quarantine = () => (existsSync(statePath()) ? (JSON.parse(readFileSync(statePath(), 'utf8')) as { quarantine: string[] }).quarantine : []);
  const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
  const cli = (...args: string[]) => {
    const run = spawnSync(process.execPath, [CLI, ...args, '--root', scratch.root, '--json'], { encoding: 'utf8', timeout: 90_000 });
    return { status: run.status, doc: JSON.parse(run.stdout || '{}') as { error?: { code: string } } };
  };
  const running = (name: 'blue' | 'green') => waitFor(async () => (await services.mainExecutable()) === slot(name), 30_000);

  /** Starts `activate CANDIDATE` and delivers `signal` once the candidate is current (the health wait). */
  const interruptedActivation = async (candidate: string, signal: NodeJS.Signals) => {
    const before = link('current');
    const child = spawn(process.execPath, [CLI, 'activate', candidate, '--root', scratch.root, '--json'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
    expect(await waitFor(() => link('current') !== before, 20_000)).toBe(true);
    child.kill(signal);
    const code = await exited;
    return { code, doc: JSON.parse(Buffer.concat(out).toString('utf8') || '{}') as { error?: { code: string } } };
  };

  beforeAll(async () => {
    assertBuildCurrent();
    scratch = makeScratch('agent-upgrade-interrupted-');
    mkdirSync(path('/etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      path('/etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ agent: { args: ['agent'] }, service: { manager: 'supervisor', ...FAST_SERVICE }, health: FAST_HEALTH, container: { manager: 'none' }, cluster: { manager: 'none' } }),
    );
    mkdirSync(path('/usr/local/bin'), { recursive: true });
    copyFileSync(agent({ version: '1.0.0' }), path('/usr/local/bin/aks-flex-node'));
    expect(cli('migrate').status).toBe(0);
    const config = await loadConfig(new NodeFileSystem(), { root: scratch.root });
    if (!config.ok) throw new Error(config.failure.message);
    services = new SupervisorServiceManager({ controlSocket: path(config.value.service.supervisorSocket), clock: new SystemClock() });
    supervisor = spawn(process.execPath, [CLI, 'supervise', '--root', scratch.root], { stdio: 'ignore' });
    expect(await running('blue')).toBe(true);
  }, 60_000);

  afterAll(async () => {
    if (supervisor !== undefined && supervisor.exitCode === null) {
      const exited = new Promise((done) => supervisor.once('exit', done));
      supervisor.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
    }
    scratch?.cleanup();
  });

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
