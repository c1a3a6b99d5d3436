/**
 * The direct path's fault classes, enumerated over the production composition (`createUpgrader`)
 * with memory ports:
 * - exit codes tell whether the host changed: one filesystem fault at every mutating op of every
 *   mutating command; a failure that claims nothing changed must leave the material host (links,
 *   slots, record, state, marker, container copy) as it was, and one that says it changed
 *   (`hostChanged`, exit 5) must have changed it;
 * - a signal at every point of an activation;
 * - an unusable lock path (FIFO, symlink, not a regular file);
 * - a supervisor killed under its running agent.
 */
import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import { MemoryFileSystem, type Snapshot, type TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import {
  LOCK_PATH_FAULTS,
  MemoryHostLock,
  type LockPathFault,
} from '../../src/adapters/node/memory/memory-host-lock.js';
import type { FaultCode } from '../../src/adapters/node/memory/memory-ops.js';
import { MemoryProcessRunner, versionOutcome } from '../../src/adapters/node/memory/memory-process-runner.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import type { Result } from '../../src/domain/common/failure.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { tempEntries } from './host-invariants.js';
import { agentScript, CONFIG, LAYOUT, SIDECAR_CONFIG } from './managed-world.js';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { digestOf } from './managed-world.js';

const CANDIDATE = '/var/tmp/aks-flex-node-candidate';
const CONTAINER_COPY = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';
const FAULTS: readonly FaultCode[] = ['ENOSPC', 'EIO', 'EROFS'];
const exe = (text: string) => ({ file: text, mode: 0o755 });
const MANAGED: TreeSpec = {
  [LAYOUT.blue]: exe(agentScript('1.0.0')),
  [LAYOUT.green]: exe(agentScript('0.9.0')),
  [LAYOUT.current]: { symlink: 'aks-flex-node-blue' },
  [LAYOUT.lastGood]: { symlink: 'aks-flex-node-green' },
  [LAYOUT.entry]: { symlink: '../lib/aks-flex-node/aks-flex-node-current' },
  [CONTAINER_COPY]: exe(agentScript('1.0.0')),
  [CANDIDATE]: exe(agentScript('2.0.0')),
};
const LEGACY: TreeSpec = {
  [LAYOUT.entry]: exe(agentScript('1.0.0')),
  [CONTAINER_COPY]: exe(agentScript('1.0.0')),
  [CANDIDATE]: exe(agentScript('2.0.0')),
};

interface Scenario {
  readonly tree: TreeSpec;
  readonly behaviour: AgentBehaviour;
  readonly run: (upgrader: Upgrader) => Promise<Result<unknown>>;
}

const SCENARIOS: Readonly<Record<string, Scenario>> = {
  'migrate a legacy host': { tree: LEGACY, behaviour: 'healthy', run: (upgrader) => upgrader.migrate() },
  'activate a healthy candidate': {
    tree: MANAGED,
    behaviour: 'healthy',
    run: (upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
  },
  'activate a candidate that crashes after start': {
    tree: MANAGED,
    behaviour: 'crash-after-start',
    run: (upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
  },
  'activate on a legacy host': {
    tree: LEGACY,
    behaviour: 'healthy',
    run: (upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
  },
  'rollback to last-good': { tree: MANAGED, behaviour: 'healthy', run: (upgrader) => upgrader.rollback() },
};

/** One host built as production builds it, with memory ports; the agent runs at boot. */
async function boot(
  scenario: Scenario,
  lockFault: LockPathFault | null = null,
  config: UpgraderConfig = CONFIG,
): Promise<{ fs: MemoryFileSystem; upgrader: Upgrader; services: MemoryServiceManager }> {
  const fs = MemoryFileSystem.fromTree(scenario.tree);
  const clock = new MemoryClock();
  const candidateDigest = await fs.hashFile(CANDIDATE, 1 << 20);
  const services = new MemoryServiceManager({
    fs,
    execStart: LAYOUT.current,
    legacyExecStart: LAYOUT.entry,
    behaviourOf: (digest) => (digest === candidateDigest.sha256 ? scenario.behaviour : 'healthy'),
  });
  await services.restart();
  const runner = new MemoryProcessRunner();
  runner.setBehaviour(CANDIDATE, versionOutcome('2.0.0'));
  const lock = new MemoryHostLock();
  lock.setPathFault(lockFault);
  const container = new MemoryContainerRootfs({
    fs,
    machinesDir: '/var/lib/machines',
    binaryPath: '/usr/local/bin/aks-flex-node',
    activeMachine: () => 'kube1',
    maxBytes: 1 << 20,
  });
  const built = createUpgrader({
    config,
    identity: { euid: 0, arch: 'amd64', pid: 4242, command: 'agent-upgrade' },
    logger: new RecordingLogger(),
    overrides: {
      fileSystem: fs,
      clock,
      serviceManager: services,
      processRunner: runner,
      containerRootfs: container,
      hostLock: lock,
    },
  });
  if (!built.ok) throw new Error(built.failure.message);
  return { fs, upgrader: built.value, services };
}

/** The slot a link names in a snapshot (its stored text), or null. */
function linkText(snapshot: Snapshot, path: string): string | null {
  const entry = snapshot[path];
  return entry?.kind === 'symlink' ? entry.target : null;
}

/** What a command may change, temps aside (a failed write may leave one; the next run sweeps it). */
function material(snapshot: Snapshot): string {
  const temps = new Set(tempEntries(snapshot));
  return JSON.stringify(
    Object.entries(snapshot).filter(
      ([path]) => !temps.has(path) && path !== CANDIDATE && !path.startsWith('/var/tmp/.'),
    ),
  );
}

describe.each(Object.entries(SCENARIOS))(
  '%s: a fault at every op, the exit code tells the truth',
  (_name, scenario) => {
    it.each(FAULTS)('%s at each op', async (code) => {
      const free = await boot(scenario);
      const before = free.fs.opCount;
      expect((await scenario.run(free.upgrader)).ok).toBe(true);
      const opCount = free.fs.opCount - before;
      expect(opCount).toBeGreaterThan(2);
      const lies: string[] = [];
      const outcomes = { ok: 0, unchanged: 0, changed: 0 };
      for (let at = 0; at < opCount; at += 1) {
        const host = await boot(scenario);
        const start = material(host.fs.snapshot());
        host.fs.failAt(host.fs.opCount + at, code);
        const result = await scenario.run(host.upgrader);
        const changed = material(host.fs.snapshot()) !== start;
        if (result.ok) {
          outcomes.ok += 1;
          continue;
        }
        const claimed = result.failure.hostChanged === true;
        outcomes[claimed ? 'changed' : 'unchanged'] += 1;
        if (claimed !== changed)
          lies.push(
            `op ${at} (${host.fs.journal
              .slice(-2)
              .map((entry) => `${entry.op} ${entry.path}`)
              .join(
                ' | ',
              )}): ${result.failure.code}, claims ${claimed ? 'changed' : 'unchanged'}, host ${changed ? 'changed' : 'unchanged'}`,
          );
      }
      expect(lies, JSON.stringify(outcomes)).toEqual([]);
    });
  },
);

/**
 * SIGINT/SIGTERM/SIGHUP at every point of an activation: the signal aborts after the k-th
 * mutating op. Whatever k, the activation ends with the candidate activated (the signal came
 * after the verdict), or with current back on the previous binary, no marker left, and the
 * candidate not quarantined (the signal, not the candidate, ended it).
 */
describe.each(['healthy', 'crash-after-start'] as const)(
  'a signal at every point of an activation (%s candidate)',
  (behaviour) => {
    const scenario = {
      tree: MANAGED,
      behaviour,
      run: (upgrader: Upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
    };

    it('ends activated, rolled back or refused, never with the candidate left unjudged', async () => {
      const free = await boot(scenario);
      const before = free.fs.opCount;
      expect((await scenario.run(free.upgrader)).ok).toBe(true);
      const opCount = free.fs.opCount - before;
      const broken: string[] = [];
      const outcomes: Record<string, number> = {};
      for (let at = 0; at <= opCount; at += 1) {
        const host = await boot(scenario);
        const controller = new AbortController();
        const first = host.fs.opCount;
        host.fs.beforeMutation(() => {
          if (host.fs.opCount - first >= at) controller.abort();
        });
        const result = await host.upgrader.activate({ candidatePath: CANDIDATE, signal: controller.signal });
        host.fs.beforeMutation(null);
        const outcome = result.ok
          ? `${result.value.outcome}${result.value.failure?.code === 'E_INTERRUPTED' ? ' (interrupted)' : ''}`
          : `refused ${result.failure.code}`;
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        const snapshot = host.fs.snapshot();
        const current = linkText(snapshot, LAYOUT.current);
        const marker = snapshot[LAYOUT.activation] !== undefined;
        const state = snapshot[LAYOUT.state];
        const quarantined =
          state?.kind === 'file' &&
          /"quarantine": \[\s*"/.test(
            new TextDecoder().decode((await host.fs.readFile(LAYOUT.state, 65536)) ?? new Uint8Array()),
          );
        const fine =
          outcome === 'activated'
            ? behaviour === 'healthy' && current === 'aks-flex-node-green'
            : current === 'aks-flex-node-blue' && !marker && (outcome !== 'rolled-back (interrupted)' || !quarantined);
        if (!fine)
          broken.push(
            `abort after op ${at}: ${outcome}, current ${current}, marker ${marker}, quarantined ${quarantined}`,
          );
      }
      expect(broken, JSON.stringify(outcomes)).toEqual([]);
      // Signals before the switch end with nothing done; after it, with a rollback.
      expect(outcomes['rolled-back (interrupted)'] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
      expect(outcomes['refused E_INTERRUPTED'] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
    });
  },
);

/** A FIFO, a symlink or another non-regular entry at the lock path: every command refuses, unchanged. */
describe.each(Object.entries(SCENARIOS))('%s with an unusable lock path', (_name, scenario) => {
  it.each(LOCK_PATH_FAULTS)('%s: E_IO, nothing changed', async (fault) => {
    const host = await boot(scenario, fault);
    const start = material(host.fs.snapshot());
    const result = await scenario.run(host.upgrader);
    expect(result.ok ? 'ok' : { code: result.failure.code, hostChanged: result.failure.hostChanged === true }).toEqual({
      code: 'E_IO',
      hostChanged: false,
    });
    expect(material(host.fs.snapshot())).toBe(start);
  });
});

/**
 * The supervisor SIGKILLed under its running agent: commands that would restart or judge the
 * agent refuse (`E_SERVICE`, nothing changed) rather than start a second one beside the orphan;
 * a new supervisor stops the orphan and exactly one agent runs again.
 */
describe('a supervisor killed under its agent', () => {
  it.each([
    ['activate', (upgrader: Upgrader) => upgrader.activate({ candidatePath: CANDIDATE })],
    ['rollback', (upgrader: Upgrader) => upgrader.rollback()],
  ] as const)(
    '%s refuses with E_SERVICE and changes nothing; the next supervisor runs one agent',
    async (_name, run) => {
      const host = await boot({ tree: MANAGED, behaviour: 'healthy', run });
      host.services.killSupervisor();
      const start = material(host.fs.snapshot());
      const result = await run(host.upgrader);
      expect(
        result.ok ? 'ok' : { code: result.failure.code, hostChanged: result.failure.hostChanged === true },
      ).toEqual({ code: 'E_SERVICE', hostChanged: false });
      expect(material(host.fs.snapshot())).toBe(start);
      expect(host.services.runningAgents).toBe(1);
      await host.services.startSupervisor();
      expect({ agents: host.services.runningAgents, activity: await host.services.activity() }).toEqual({
        agents: 1,
        activity: 'active',
      });
    },
  );
});

/**
 * A direct activation killed after its switch, then the daemon starts (the production
 * `ManagedSession`): its start resolves the marker before it converges anything. A sidecar
 * daemon judges the agent; a self-hosted one is the candidate itself, so its rollback is a
 * scheduled restart through the service manager.
 */
describe('the daemon start resolves an interrupted direct activation', () => {
  const killedAfterSwitch: TreeSpec = {
    ...MANAGED,
    [LAYOUT.current]: { symlink: 'aks-flex-node-green' },
    [LAYOUT.lastGood]: { symlink: 'aks-flex-node-blue' },
    [LAYOUT.green]: exe(agentScript('2.0.0')),
    [LAYOUT.activation]: {
      file: JSON.stringify({
        kind: 'AgentDirectActivation',
        schemaVersion: 1,
        previous: 'blue',
        candidate: 'green',
        candidateDigest: digestOf(agentScript('2.0.0')),
        candidateVersion: '2.0.0',
        serviceActive: true,
      }),
      mode: 0o600,
    },
  };

  it.each([
    [
      'sidecar, the candidate crashes after start: rolled back, quarantined',
      SIDECAR_CONFIG,
      'crash-after-start',
      'aks-flex-node-blue',
      0,
    ],
    ['sidecar, the candidate is healthy: committed', SIDECAR_CONFIG, 'healthy', 'aks-flex-node-green', 0],
    ['self-hosted, the candidate is healthy: committed', CONFIG, 'healthy', 'aks-flex-node-green', 0],
    [
      'self-hosted, the candidate fails: rolled back by a scheduled restart, quarantined',
      CONFIG,
      'crash-after-start',
      'aks-flex-node-blue',
      1,
    ],
  ] as const)('%s', async (_label, config, behaviour, expectedCurrent, scheduledRestarts) => {
    const candidate = digestOf(agentScript('2.0.0'));
    const host = await boot(
      {
        tree: { ...killedAfterSwitch, [CANDIDATE]: exe(agentScript('2.0.0')) },
        behaviour,
        run: (upgrader) => upgrader.migrate(),
      },
      null,
      config,
    );
    // The agent restarted (or the host rebooted) after the kill: it runs what current names.
    await host.services.restart();
    const session = host.upgrader.managed({ store: new MemoryOperationStore(), selfExecutable: LAYOUT.blue });
    if (!session.ok) throw new Error(session.failure.message);
    const started = await session.value.start();
    expect(started.ok).toBe(true);
    const snapshot = host.fs.snapshot();
    const stateText = new TextDecoder().decode((await host.fs.readFile(LAYOUT.state, 65536)) ?? new Uint8Array());
    const quarantine = stateText === '' ? [] : (JSON.parse(stateText) as { quarantine: string[] }).quarantine;
    expect({
      current: linkText(snapshot, LAYOUT.current),
      marker: snapshot[LAYOUT.activation] !== undefined,
      quarantined: quarantine.includes(candidate),
      scheduled: host.services.scheduledRestarts,
    }).toEqual({
      current: expectedCurrent,
      marker: false,
      quarantined: behaviour === 'crash-after-start',
      scheduled: scheduledRestarts,
    });
  });
});
