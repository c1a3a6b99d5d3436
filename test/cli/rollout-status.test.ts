/**
 * `agent-upgrade rollout status NAME` over a MemoryRolloutStore, and what every rollout command
 * refuses before it writes: a rollout that does not exist, a bad or missing name, cluster failures
 * and host options. Exit codes and error codes, never message text.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clusterRefusal, MemoryRolloutStore } from '../../src/adapters/fleet/memory/memory-rollout-store.js';
import { ClusterError } from '../../src/domain/common/port-errors.js';
import { makeScratch } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';
import { HALTED_STATUS, NAME, putRollout, runRollout, specOf } from './rollout-cli-fixtures.js';

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
beforeEach(() => {
  scratch = makeScratch();
});
afterEach(() => scratch.cleanup());

let store: MemoryRolloutStore;
beforeEach(() => {
  store = new MemoryRolloutStore();
});

const put = (spec: Record<string, unknown> = {}, status?: unknown, name = NAME): void =>
  putRollout(store, spec, status, name);
const rollout = async (...argv: string[]) => runRollout(store, ...argv);
const spec = () => specOf(store);

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
