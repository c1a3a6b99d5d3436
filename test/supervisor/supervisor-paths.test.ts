import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryOperationStore } from '../../src/adapters/memory/memory-operation-store.js';
import { SystemClock } from '../../src/adapters/node/system-clock.js';
import { requestSupervisor } from '../../src/adapters/supervisor/control-client.js';
import { SupervisorServiceManager } from '../../src/adapters/supervisor/supervisor-service-manager.js';
import { loadConfig } from '../../src/app/config/load-config.js';
import { NodeFileSystem } from '../../src/adapters/node/node-file-system.js';
import { createUpgrader } from '../../src/app/upgrader.js';
import { buildTestAgent, type TestAgentBuild } from '../support/agent/build-agent.js';
import { releaseArchive } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { makeScratch } from '../support/real-tree.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { assertBuildCurrent, CLI, FAST_HEALTH, FAST_SERVICE, TEST_IDENTITY } from '../support/systemd/systemd-host.js';
import { waitFor } from '../support/wait-for.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const SLOTS = '/usr/local/lib/aks-flex-node';

/**
 * The scenarios of the real-systemd suite that apply to hosts without systemd, with the built-in
 * supervisor (`agent-upgrade supervise`, a real process) running the compiled test agent and every
 * other command reaching it over its control socket.
 */
describe('the built-in supervisor runs the same scenarios', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let supervisor: ChildProcess;
  let services: SupervisorServiceManager;
  let releases: HostileServer;
  const store = new MemoryOperationStore({ clock: new SystemClock() });
  const root = () => scratch.root;
  // Every build embeds the upgrader: whichever is last-good, the hook's `<last-good> recover` works.
  const agent = (build: TestAgentBuild) => buildTestAgent(join(scratch.root, 'agents'), { ...build, embedsUpgrader: true });
  const path = (hostPath: string) => join(scratch.root, hostPath);
  const slot = (name: 'blue' | 'green') => realpathSync(path(`${SLOTS}/aks-flex-node-${name}`));
  const link = (name: 'current' | 'last-good') => readlinkSync(path(`${SLOTS}/aks-flex-node-${name}`)).replace(/^.*aks-flex-node-/, '');
  const cli = (...args: string[]) => {
    const run = spawnSync(process.execPath, [CLI, ...args, '--root', root(), '--json'], { encoding: 'utf8', timeout: 90_000 });
    return { status: run.status, doc: JSON.parse(run.stdout || '{}') as { error?: { code: string } } };
  };
  const running = (name: 'blue' | 'green') => waitFor(async () => (await services.mainExecutable()) === slot(name), 30_000);

  beforeAll(async () => {
    assertBuildCurrent();
    scratch = makeScratch('agent-upgrade-supervisor-');
    releases = await startHostileServer();
    mkdirSync(path('/etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      path('/etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ agent: { args: ['agent'] }, service: { manager: 'supervisor', ...FAST_SERVICE }, health: FAST_HEALTH, container: { manager: 'none' }, cluster: { manager: 'none' } }),
    );
    mkdirSync(path('/usr/local/bin'), { recursive: true });
    copyFileSync(agent({ version: '1.0.0' }), path('/usr/local/bin/aks-flex-node'));
    expect(cli('migrate').status).toBe(0);
    const config = await loadConfig(new NodeFileSystem(), { root: root() });
    if (!config.ok) throw new Error(config.failure.message);
    services = new SupervisorServiceManager({ controlSocket: path(config.value.service.supervisorSocket), clock: new SystemClock() });
    supervisor = spawn(process.execPath, [CLI, 'supervise', '--root', root()], { stdio: 'ignore' });
    expect(await running('blue')).toBe(true);
  }, 60_000);

  afterAll(async () => {
    if (supervisor !== undefined && supervisor.exitCode === null) {
      const exited = new Promise((done) => supervisor.once('exit', done));
      supervisor.kill('SIGTERM');
      await Promise.race([exited, new Promise((done) => setTimeout(done, 10_000))]);
    }
    await releases?.close();
    scratch?.cleanup();
  });

  it('direct activate: the supervisor runs the candidate', async () => {
    expect(cli('activate', agent({ version: '2.0.0' })).status).toBe(0);
    expect({ current: link('current'), lastGood: link('last-good') }).toEqual({ current: 'green', lastGood: 'blue' });
    expect(await running('green')).toBe(true);
  });

  it('direct activate of a candidate that crashes on start: rolled back, exit 3', async () => {
    const result = cli('activate', agent({ version: '3.0.0', behaviour: 'crash-on-start' }));
    expect({ status: result.status, code: result.doc.error?.code }).toEqual({ status: 3, code: 'E_UNHEALTHY' });
    expect(link('current')).toBe('green');
    expect(await running('green')).toBe(true);
  });

  async function daemon(selfExecutable: string | null) {
    const config = await loadConfig(new NodeFileSystem(), { root: root() });
    if (!config.ok) throw new Error(config.failure.message);
    const upgrader = createUpgrader({ config: config.value, identity: { ...TEST_IDENTITY, pid: process.pid }, logger: new RecordingLogger() });
    if (!upgrader.ok) throw new Error(upgrader.failure.message);
    const session = upgrader.value.managed({ store, selfExecutable });
    if (!session.ok) throw new Error(session.failure.message);
    return session.value;
  }

  function publish(build: TestAgentBuild): Record<string, string> {
    const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, readFileSync(agent(build)));
    const route = `/agent-${build.version}.tar.gz`;
    releases.route(route, serve(archive));
    return { downloadURL: releases.url(route), sha256: sha256(archive) };
  }

  it('managed, self-hosted: hand-over through a delayed supervisor restart; the candidate publishes Complete', async () => {
    const parameters = publish({ version: '4.0.0' });
    const operation = store.create({ name: 'sup-ok', parameters });
    const old = await daemon(await services.mainExecutable());
    expect(await old.handle({ operation, phase: null, parameters })).toEqual({ ok: true, value: { kind: 'handed-over' } });
    expect(await running('blue')).toBe(true);

    const restarted = await daemon(await services.mainExecutable());
    expect(await restarted.start()).toEqual({ ok: true, value: { kind: 'open' } });
    expect(store.get('sup-ok')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(store.terminalWrites('sup-ok')).toBe(1);
    expect({ current: link('current'), record: existsSync(path('/etc/aks-flex-node/agent-upgrade-signal.json')) }).toEqual({ current: 'blue', record: false });
  });

  it('managed, self-hosted: a crash-looping candidate hits the start limit; the hook recovers through last-good, which publishes Failed once', async () => {
    const parameters = publish({ version: '5.0.0', behaviour: 'crash-on-start' });
    const operation = store.create({ name: 'sup-crash', parameters });
    const old = await daemon(await services.mainExecutable());
    expect(await old.handle({ operation, phase: null, parameters })).toEqual({ ok: true, value: { kind: 'handed-over' } });
    const record = path('/etc/aks-flex-node/agent-upgrade-signal.json');
    expect(await waitFor(async () => existsSync(record) && JSON.parse(readFileSync(record, 'utf8')).failure != null && (await services.mainExecutable()) === slot('blue'), 40_000)).toBe(true);

    // The hook's `recover` still holds the host lock while it waits for last-good to be healthy;
    // a daemon retries a busy gate, and so does this one (bounded).
    const lastGood = await daemon(await services.mainExecutable());
    let started = await lastGood.start();
    for (let attempt = 0; attempt < 40 && started.ok && started.value.kind === 'busy'; attempt += 1) {
      await new Promise((done) => setTimeout(done, 250));
      started = await lastGood.start();
    }
    expect(started).toEqual({ ok: true, value: { kind: 'open' } });
    expect(store.get('sup-crash')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(store.terminalWrites('sup-crash')).toBe(1);
    expect({ current: link('current'), record: existsSync(record) }).toEqual({ current: 'blue', record: false });
    expect(await services.activity()).toBe('active');
  });

  it('a stopped agent stays stopped through an activation', async () => {
    expect(await services.mainExecutable()).not.toBe(null);
    await requestSupervisor(path('/run/aks-flex-node-supervisor.sock'), { op: 'stop' }, 10_000);
    expect(cli('activate', agent({ version: '6.0.0' })).status).toBe(0);
    expect(await services.activity()).toBe('inactive');
  });
});
