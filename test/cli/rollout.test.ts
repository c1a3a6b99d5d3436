/**
 * `agent-upgrade rollout status|pause|resume|abort|rollback NAME` over a MemoryRolloutStore:
 * exit codes, error codes and the rollout's resulting spec (never message text), the
 * resourceVersion precondition and its bounded retry, and every transition the CRD's CEL rules
 * refuse being refused before anything is written.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { load } from 'js-yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clusterRefusal, MemoryRolloutStore } from '../../src/adapters/fleet/memory/memory-rollout-store.js';
import { ClusterError } from '../../src/domain/common/port-errors.js';
import { makeScratch } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const EXAMPLE = load(
  readFileSync(resolve(import.meta.dirname, '../../deploy/examples/agent-rollout.yaml'), 'utf8'),
) as {
  metadata: { name: string };
  spec: Record<string, unknown>;
};
const NAME = EXAMPLE.metadata.name;
const HALT_ID = 'early-e67b10ca';

const wave = (name: string, phase: string, size: number, cursor: number, used = 0, allowed = 0) => ({
  name,
  phase,
  size,
  cursor,
  pendingCreates: [],
  failureBudget: { allowed, used },
});
const HALTED_STATUS = {
  observedGeneration: 2,
  phase: 'Halted',
  progress: '15/400',
  currentWave: 'early',
  counts: {
    targets: 400,
    excluded: { optedOut: 0, alreadyAtTarget: 0, conflict: 0, vanished: 0, noArtifact: 0 },
    pending: 384,
    inFlight: 0,
    succeeded: 15,
    failed: 1,
    timedOut: 0,
    lost: 0,
    rolledBack: 0,
  },
  waves: [wave('canary', 'Completed', 4, 4), wave('early', 'Halted', 36, 12, 1, 0)],
  failures: { sample: [], byReason: { DaemonFailed: 1 }, byLabel: {} },
  halt: {
    id: HALT_ID,
    reason: 'FailureBudgetExceeded',
    wave: 'early',
    at: '2025-03-03T08:42:00Z',
    message: 'wave early: 1 failure(s), the budget allows 0',
    quarantine: 'Applied',
  },
  conditions: [],
};

/** One context, `only`, whose server nothing listens on: the CLI must fail before it connects. */
const KUBECONFIG_ONE_CONTEXT = [
  'apiVersion: v1',
  'kind: Config',
  'current-context: only',
  'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
  'users: [{name: u, user: {token: t}}]',
  'contexts: [{name: only, context: {cluster: c, user: u}}]',
].join('\n');

let scratch: ReturnType<typeof makeScratch>;
let store: MemoryRolloutStore;

beforeEach(() => {
  scratch = makeScratch();
  store = new MemoryRolloutStore();
});
afterEach(() => scratch.cleanup());

function put(spec: Record<string, unknown> = {}, status?: unknown, name = NAME): void {
  store.put({ name, spec: { ...EXAMPLE.spec, ...spec }, ...(status === undefined ? {} : { status }) });
}

async function rollout(...argv: string[]) {
  const run = await runCliInMemory(['rollout', ...argv, '--json'], { rolloutStore: store });
  const document = JSON.parse(run.stdout) as {
    ok: boolean;
    error?: { code: string };
    rollout?: Record<string, unknown>;
  };
  return { exitCode: run.exitCode, code: document.error?.code ?? null, rollout: document.rollout };
}

const spec = () => {
  const stored = store.peek(NAME)?.spec;
  return { state: stored?.['state'], resumeFromHalt: stored?.['resumeFromHalt'] ?? '' };
};

describe('rollout status', () => {
  it('prints the status as read, with name, release, state and phase (--json)', async () => {
    put({ state: 'Run' }, HALTED_STATUS);
    const { exitCode, rollout: view } = await rollout('status', NAME);
    expect(exitCode).toBe(0);
    expect(view).toMatchObject({
      name: NAME,
      release: 'aks-flex-node-v1.4.2',
      state: 'Run',
      phase: 'Halted',
      status: HALTED_STATUS,
    });
  });

  it('prints key: value lines and one row per wave as text', async () => {
    put({ state: 'Run' }, HALTED_STATUS);
    const run = await runCliInMemory(['rollout', 'status', NAME], { rolloutStore: store });
    expect(run.exitCode).toBe(0);
    if (process.env['SHOW_ROLLOUT'] === '1') console.log(run.stdout);
    const lines = run.stdout.split('\n');
    expect(lines.filter((line) => /^Phase:\s+Halted$/.test(line))).toHaveLength(1);
    const table = lines.slice(lines.indexOf('Waves:') + 1).filter((line) => line !== '');
    expect(table.map((line) => line.split(/\s+/))).toEqual([
      ['NAME', 'PHASE', 'SIZE', 'CURSOR/IN-FLIGHT', 'FAILURES', 'BAKING', 'UNTIL'],
      ['canary', 'Completed', '4', '4/-', '0/0', '-'],
      ['early', 'Halted', '36', '12/-', '1/0', '-'],
    ]);
  });

  it('a rollout the controller has not reported on yet has phase null', async () => {
    put();
    expect(await rollout('status', NAME)).toMatchObject({
      exitCode: 0,
      rollout: { state: 'Preview', phase: null, status: null },
    });
  });

  it.each([['status'], ['pause'], ['resume'], ['abort'], ['rollback']])(
    '%s of a rollout that does not exist is E_NOT_FOUND (exit 1)',
    async (command) => {
      put({}, undefined, 'another');
      expect(await rollout(command, NAME)).toMatchObject({ exitCode: 1, code: 'E_NOT_FOUND' });
      expect(store.patches).toEqual([]);
    },
  );

  it('a name that is no Kubernetes object name is E_USAGE (exit 2), and the store is never opened', async () => {
    put();
    expect(await rollout('status', '../Fleet')).toMatchObject({ exitCode: 2, code: 'E_USAGE' });
    expect(store.reads).toBe(0);
  });

  it('a missing NAME is E_USAGE (exit 2)', async () => {
    const run = await runCliInMemory(['rollout', 'pause', '--json']);
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_USAGE', missing: ['NAME'] } });
  });

  it.each([
    [clusterRefusal(null), 'E_CLUSTER'],
    [clusterRefusal(500), 'E_CLUSTER'],
    [new ClusterError(401, 'refused', 'unauthorized'), 'E_CLUSTER_AUTH'],
  ])('a cluster failure (%s) is %s (exit 1)', async (error, code) => {
    put();
    store.failNext(error);
    expect(await rollout('resume', NAME)).toMatchObject({ exitCode: 1, code });
    expect(spec().state).toBe('Preview');
  });

  it.each([
    ['--config', 'agent-upgrade.json'],
    ['--root', '/'],
  ])('reads no host configuration: %s is E_USAGE (exit 2)', async (flag, value) => {
    put();
    const run = await runCliInMemory(['rollout', 'status', NAME, flag, value, '--json'], { rolloutStore: store });
    expect({ exitCode: run.exitCode, document: JSON.parse(run.stdout) as unknown }).toMatchObject({
      exitCode: 2,
      document: { ok: false, error: { code: 'E_USAGE' } },
    });
  });

  it('a --context the kubeconfig does not have is E_CLUSTER (exit 1), before any request', async () => {
    const kubeconfig = join(scratch.root, 'kubeconfig');
    writeFileSync(kubeconfig, KUBECONFIG_ONE_CONTEXT);
    const run = await runCliInMemory([
      'rollout',
      'status',
      NAME,
      '--kubeconfig',
      kubeconfig,
      '--context',
      'other',
      '--json',
    ]);
    expect({ exitCode: run.exitCode, document: JSON.parse(run.stdout) as unknown }).toMatchObject({
      exitCode: 1,
      document: { ok: false, error: { code: 'E_CLUSTER' } },
    });
  });
});

describe('rollout pause, resume, abort, rollback', () => {
  it.each([
    ['resume', 'Preview', 'Run'],
    ['pause', 'Preview', 'Pause'],
    ['abort', 'Preview', 'Abort'],
    ['rollback', 'Preview', 'RollBack'],
    ['pause', 'Run', 'Pause'],
    ['resume', 'Pause', 'Run'],
    ['abort', 'Run', 'Abort'],
    ['rollback', 'Pause', 'RollBack'],
    ['rollback', 'Abort', 'RollBack'],
    ['abort', 'RollBack', 'Abort'],
  ])('%s from %s sets spec.state %s, at the resourceVersion it read', async (command, from, to) => {
    put({ state: from });
    const read = store.peek(NAME)?.resourceVersion;
    const { exitCode, rollout: change } = await rollout(command, NAME);
    expect(exitCode).toBe(0);
    expect(change).toMatchObject({ changed: true, from: { state: from }, to: { state: to } });
    expect(spec()).toEqual({ state: to, resumeFromHalt: '' });
    expect(store.patches).toEqual([{ name: NAME, resourceVersion: read, patch: { state: to } }]);
    expect(store.closed).toBe(1);
  });

  it.each([
    ['pause', 'Pause'],
    ['resume', 'Run'],
    ['abort', 'Abort'],
    ['rollback', 'RollBack'],
  ])('%s of a rollout already %s is exit 0, unchanged, and writes nothing', async (command, state) => {
    put({ state });
    expect(await rollout(command, NAME)).toMatchObject({ exitCode: 0, rollout: { changed: false } });
    expect(store.patches).toEqual([]);
    expect(spec().state).toBe(state);
  });

  it.each([
    ['pause', 'Abort'],
    ['resume', 'Abort'],
    ['pause', 'RollBack'],
    ['resume', 'RollBack'],
  ])(
    '%s of a rollout in %s is refused by the CEL rules first: E_TRANSITION_REFUSED (exit 2)',
    async (command, state) => {
      put({ state });
      expect(await rollout(command, NAME)).toMatchObject({ exitCode: 2, code: 'E_TRANSITION_REFUSED' });
      expect(store.patches).toEqual([]);
      expect(spec().state).toBe(state);
    },
  );

  it('rollback of a rollout without spec.rollback is E_NO_ROLLBACK_RELEASE (exit 2), nothing written', async () => {
    store.put({ name: NAME, spec: { ...EXAMPLE.spec, state: 'Run', rollback: undefined } });
    expect(await rollout('rollback', NAME)).toMatchObject({ exitCode: 2, code: 'E_NO_ROLLBACK_RELEASE' });
    expect(store.patches).toEqual([]);
    expect(spec().state).toBe('Run');
  });

  it('resume of a Halted rollout sets spec.resumeFromHalt to status.halt.id; again, it is unchanged', async () => {
    put({ state: 'Run' }, HALTED_STATUS);
    const first = await rollout('resume', NAME);
    expect(first).toMatchObject({
      exitCode: 0,
      rollout: { changed: true, to: { state: 'Run', resumeFromHalt: HALT_ID } },
    });
    expect(store.patches.map((write) => write.patch)).toEqual([{ resumeFromHalt: HALT_ID }]);
    expect(await rollout('resume', NAME)).toMatchObject({ exitCode: 0, rollout: { changed: false } });
    expect(store.patches).toHaveLength(1);
    expect(spec()).toEqual({ state: 'Run', resumeFromHalt: HALT_ID });
  });

  it('resume of a Halted rollout that was paused sets both, in one write', async () => {
    put({ state: 'Pause', resumeFromHalt: 'canary-00000000' }, HALTED_STATUS);
    expect((await rollout('resume', NAME)).exitCode).toBe(0);
    expect(store.patches.map((write) => write.patch)).toEqual([{ state: 'Run', resumeFromHalt: HALT_ID }]);
    expect(spec()).toEqual({ state: 'Run', resumeFromHalt: HALT_ID });
  });

  it('pause of a Halted rollout leaves spec.resumeFromHalt alone', async () => {
    put({ state: 'Run' }, HALTED_STATUS);
    expect((await rollout('pause', NAME)).exitCode).toBe(0);
    expect(spec()).toEqual({ state: 'Pause', resumeFromHalt: '' });
  });

  it('a conflict (the rollout changed after it was read) is read and decided again', async () => {
    put({ state: 'Preview' });
    store.interfere(2);
    expect(await rollout('resume', NAME)).toMatchObject({ exitCode: 0, rollout: { changed: true, attempts: 3 } });
    expect(spec().state).toBe('Run');
    expect(store.patches).toHaveLength(1);
  });

  it('decided again on the fresh read: aborted in between, resume is refused and nothing is written', async () => {
    put({ state: 'Pause' });
    store.interfere(1, (read) => ({ ...read, spec: { ...read.spec, state: 'Abort' } }));
    expect(await rollout('resume', NAME)).toMatchObject({ exitCode: 2, code: 'E_TRANSITION_REFUSED' });
    expect(store.patches).toEqual([]);
    expect(spec().state).toBe('Abort');
  });

  it('conflicts on every attempt end with E_CLUSTER (exit 1) after a bounded number of reads, nothing written', async () => {
    put({ state: 'Run' });
    store.interfere(100);
    expect(await rollout('pause', NAME)).toMatchObject({ exitCode: 1, code: 'E_CLUSTER' });
    expect(store.reads).toBe(5);
    expect(store.patches).toEqual([]);
    expect(spec().state).toBe('Run');
  });

  it('a rollout deleted between the read and the write is E_NOT_FOUND (exit 1)', async () => {
    put({ state: 'Run' });
    const original = store.patchSpec.bind(store);
    store.patchSpec = async (...args) => {
      store.delete(NAME);
      return original(...args);
    };
    expect(await rollout('pause', NAME)).toMatchObject({ exitCode: 1, code: 'E_NOT_FOUND' });
  });

  it.each([['status'], ['pause'], ['resume'], ['abort'], ['rollback']])(
    'rollout %s --help is exit 0',
    async (command) => {
      const run = await runCliInMemory(['rollout', command, '--help']);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain(`agent-upgrade rollout ${command}`);
    },
  );
});
