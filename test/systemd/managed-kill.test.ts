import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestAgent } from '../support/agent/build-agent.js';
import { releaseArchive } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { CLI, SystemdWorld, TEST_IDENTITY, type SandboxHost } from '../support/systemd/systemd-host.js';

const CHILD = join(dirname(CLI), '../test/support/systemd/daemon-child.mjs');
const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface KillPoint {
  readonly target: 'fs' | 'store' | 'services';
  readonly method: string;
  readonly when?: 'before' | 'after';
  readonly path?: string;
  readonly occurrence?: number;
}

interface StoredOperation {
  phase: string | null;
  reason?: string;
  terminalWrites: number;
  history: { phase: string }[];
}

const RECORD = 'agent-upgrade-signal.json';

/**
 * SIGKILL of a real daemon process at each phase of a self-hosted managed upgrade
 * (docs/protocol.md): the daemon is the agent, so the agent's process is killed with it and
 * systemd restarts it into whatever current names; the next daemon's startup gate must reach the
 * outcome the protocol prescribes — rollback and Failed before the switch is committed, Complete
 * after — with exactly one terminal status and no record left.
 */
describe('SIGKILL of the daemon at each phase of the managed path (real systemd)', () => {
  let world: SystemdWorld;
  let releases: HostileServer;
  let release: { readonly parameters: Record<string, string>; readonly digest: string };

  beforeAll(async () => {
    world = await SystemdWorld.create();
    releases = await startHostileServer();
    const binary = readFileSync(buildTestAgent(world.agentsDir(), { version: '2.0.0' }));
    const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, binary);
    releases.route('/agent-2.0.0.tar.gz', serve(archive));
    release = {
      parameters: { downloadURL: releases.url('/agent-2.0.0.tar.gz'), sha256: sha256(archive) },
      digest: sha256(binary),
    };
  }, 60_000);
  afterAll(async () => {
    await releases?.close();
    await world?.close();
  });

  const runningHost = () => world.runningHost();

  const storePath = (host: SandboxHost) => host.path('/cluster.json');
  const operation = (host: SandboxHost): StoredOperation =>
    (JSON.parse(readFileSync(storePath(host), 'utf8')) as { operations: Record<string, StoredOperation> }).operations
      .upgrade as StoredOperation;
  const violations = (host: SandboxHost): unknown[] =>
    (JSON.parse(readFileSync(storePath(host), 'utf8')) as { violations: unknown[] }).violations;
  const terminal = (host: SandboxHost) => ['Complete', 'Failed'].includes(operation(host).phase ?? '');

  /** One daemon step as a real process inside the namespace; `null` when it was killed. */
  async function daemonStep(
    host: SandboxHost,
    mode: 'start' | 'handle',
    selfExecutable: string | null,
    killAt: KillPoint | null = null,
  ): Promise<{ kind: string; reason?: string } | null> {
    const env = {
      ...process.env,
      DAEMON_CHILD: JSON.stringify({
        root: host.root,
        mode,
        selfExecutable,
        killAt,
        arch: TEST_IDENTITY.arch,
        cli: CLI,
        storePath: storePath(host),
        operation: { name: 'upgrade', uid: 'uid-upgrade' },
        parameters: release.parameters,
      }),
    };
    const result = await host.systemd.runAsync(process.execPath, [CHILD], { env, timeoutMs: 90_000 });
    if (result.status === null || result.status === 137) return null;
    if (result.status !== 0) throw new Error(`daemon step failed (${result.status}): ${result.stderr}`);
    const outcome = JSON.parse(result.stdout) as {
      ok: boolean;
      value?: { kind: string; reason?: string };
      failure?: unknown;
    };
    if (!outcome.ok) throw new Error(`daemon step returned a failure: ${JSON.stringify(outcome.failure)}`);
    return outcome.value ?? null;
  }

  /** The agent's main process: waits (bounded) until one runs and returns its PID and executable. */
  async function runningAgent(host: SandboxHost, notPid?: string): Promise<{ pid: string; exe: string }> {
    let found: { pid: string; exe: string } | null = null;
    await host.systemd.waitFor(() => {
      const pid = host.systemd.property(host.unit, 'MainPID');
      const exe = host.mainExecutable();
      found = pid !== '0' && pid !== notPid && exe !== null ? { pid, exe } : null;
      return found !== null;
    }, 30_000);
    if (found === null) throw new Error(`the agent did not run again (state ${host.activeState()})`);
    return found;
  }

  /**
   * Daemon starts (and hand-overs) until the operation is terminal and no record is left; bounded.
   * `killedPid` is the agent just killed: systemd may still report it for a moment, so the first
   * round waits for its successor.
   */
  async function settle(host: SandboxHost, killedPid?: string): Promise<void> {
    for (let round = 0; round < 8 && !(terminal(host) && !host.recordExists()); round += 1) {
      const agent = await runningAgent(host, round === 0 ? killedPid : undefined);
      const started = await daemonStep(host, 'start', agent.exe);
      if (started?.kind === 'closed') await runningAgent(host, agent.pid);
      else if (started?.kind === 'open' && !terminal(host) && !host.recordExists()) {
        const handled = await daemonStep(host, 'handle', agent.exe);
        if (handled?.kind === 'handed-over') await runningAgent(host, agent.pid);
      } else if (started?.kind === 'busy') await new Promise((done) => setTimeout(done, 500));
    }
  }

  const phases: readonly (readonly [string, KillPoint, 'Complete' | 'Failed'])[] = [
    [
      'before the record is written',
      { target: 'fs', method: 'writeFileAtomic', path: RECORD, when: 'before' },
      'Complete',
    ],
    ['after the record is written', { target: 'fs', method: 'writeFileAtomic', path: RECORD }, 'Failed'],
    ['after InProgress is marked', { target: 'store', method: 'markInProgress' }, 'Failed'],
    [
      'after the candidate slot is recorded',
      { target: 'fs', method: 'writeFileAtomic', path: RECORD, occurrence: 2 },
      'Failed',
    ],
    // Startup row S4: current is the candidate and it runs healthy, committed or not.
    [
      'after current is switched, before the commit is recorded',
      { target: 'fs', method: 'replaceSymlink', path: 'aks-flex-node-current' },
      'Complete',
    ],
    [
      'after the commit, before the restart is scheduled',
      { target: 'services', method: 'scheduleRestart', when: 'before' },
      'Complete',
    ],
    ['after the restart is scheduled', { target: 'services', method: 'scheduleRestart' }, 'Complete'],
  ];

  it.each(phases)(
    'killed %s: the next daemons reach %s',
    async (_name, killAt, expected) => {
      const host = await runningHost();
      writeFileSync(
        storePath(host),
        JSON.stringify({ operations: { upgrade: { phase: null, terminalWrites: 0, history: [] } }, violations: [] }),
      );
      const agent = await runningAgent(host);

      expect(await daemonStep(host, 'handle', agent.exe, killAt)).toBe(null);
      // The daemon is the agent: its process dies with it, and systemd restarts the unit.
      const killed = host.systemctl('kill', '--signal=SIGKILL', host.unit);
      expect(killed.status, killed.stderr).toBe(0);
      await settle(host, agent.pid);

      await expectOutcome(host, expected);
    },
    180_000,
  );

  it.each([
    ['before it publishes', { target: 'store', method: 'publish', when: 'before' } as KillPoint],
    ['after it published, before the record is deleted', { target: 'store', method: 'publish' } as KillPoint],
  ])(
    'the restarted daemon killed %s: the next one publishes Complete once',
    async (_name, killAt) => {
      const host = await runningHost();
      writeFileSync(
        storePath(host),
        JSON.stringify({ operations: { upgrade: { phase: null, terminalWrites: 0, history: [] } }, violations: [] }),
      );
      const old = await runningAgent(host);
      expect(await daemonStep(host, 'handle', old.exe)).toEqual({ kind: 'handed-over' });
      const candidate = await runningAgent(host, old.pid);

      expect(await daemonStep(host, 'start', candidate.exe, killAt)).toBe(null);
      const killed = host.systemctl('kill', '--signal=SIGKILL', host.unit);
      expect(killed.status, killed.stderr).toBe(0);
      await settle(host, candidate.pid);

      await expectOutcome(host, 'Complete');
    },
    180_000,
  );

  async function expectOutcome(host: SandboxHost, expected: 'Complete' | 'Failed'): Promise<void> {
    const slot = expected === 'Complete' ? 'green' : 'blue';
    // The unit may still be restarting into its final binary: wait (bounded) on what is asserted.
    await host.systemd.waitFor(() => host.mainExecutable() === host.slotPath(slot), 30_000);
    expect({
      phase: operation(host).phase,
      terminalWrites: operation(host).terminalWrites,
      violations: violations(host),
    }).toEqual({ phase: expected, terminalWrites: 1, violations: [] });
    expect({ current: host.link('current'), record: host.recordExists() }).toEqual({ current: slot, record: false });
    expect(host.mainExecutable()).toBe(host.slotPath(slot));
    const copy = sha256(readFileSync(host.path('/var/lib/machines/kube1/usr/local/bin/aks-flex-node')));
    expect(copy).toBe(sha256(readFileSync(host.slotPath(slot))));
    if (expected === 'Complete') expect(copy).toBe(release.digest);
  }
});
