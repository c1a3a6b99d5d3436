/**
 * `rollout list`, `rollout approve` and `release quarantine|unquarantine` over a
 * MemoryRolloutStore, and `-o`: exit codes, error codes and the resulting objects.
 */
import { load } from 'js-yaml';
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryRolloutStore } from '../../src/adapters/fleet/memory/memory-rollout-store.js';
import { ANNOTATION_APPROVE_WAVE } from '../../src/domain/fleet/spec/rollout-vocabulary.js';
import { expectGolden } from '../support/golden.js';
import { runCliInMemory } from '../support/run-cli.js';
import { HALTED_STATUS, NAME, putRollout } from './rollout-cli-fixtures.js';

const RELEASE = 'aks-flex-node-v1.4.2';
/** The canary (gate Manual) done and baked: the rollout waits for a person. */
const AWAITING = {
  ...HALTED_STATUS,
  phase: 'AwaitingApproval',
  currentWave: 'canary',
  halt: undefined,
  waves: [HALTED_STATUS.waves[0]],
};

let store: MemoryRolloutStore;
beforeEach(() => {
  store = new MemoryRolloutStore();
  store.putRelease(RELEASE, { version: 'v1.4.2', artifacts: [] });
});

async function run(...argv: string[]) {
  const cli = await runCliInMemory(argv, { rolloutStore: store });
  const document = cli.stdout.startsWith('{') ? (JSON.parse(cli.stdout) as Record<string, unknown>) : {};
  const error = document['error'] as { code: string } | undefined;
  return { exitCode: cli.exitCode, code: error?.code ?? null, document, stdout: cli.stdout };
}

describe('rollout list', () => {
  it('lists every rollout by name, as text, wide, JSON and YAML', async () => {
    putRollout(store, {}, HALTED_STATUS, 'b-halted');
    putRollout(store, {}, AWAITING, 'a-awaiting');
    putRollout(store, { state: 'Preview' }, undefined, 'c-preview');
    expectGolden('rollout-list.txt', (await run('rollout', 'list')).stdout);
    expectGolden('rollout-list-wide.txt', (await run('rollout', 'list', '-o', 'wide')).stdout);
    const json = await run('rollout', 'list', '-o', 'json');
    const names = (json.document['rollouts'] as { name: string }[]).map((entry) => entry.name);
    expect(names).toEqual(['a-awaiting', 'b-halted', 'c-preview']);
    const yaml = load((await run('rollout', 'list', '-o', 'yaml')).stdout) as Record<string, unknown>;
    expect(yaml).toEqual(json.document);
  });

  it('says so when there is none, and refuses an unknown -o before reading', async () => {
    expect((await run('rollout', 'list')).stdout).toBe('No AgentRollouts found.\n');
    const reads = store.reads;
    const refused = await run('rollout', 'list', '-o', 'table');
    expect(refused.exitCode).toBe(2);
    expect(await run('rollout', 'list', '-o', 'table', '--json')).toMatchObject({ exitCode: 2, code: 'E_USAGE' });
    expect(store.reads).toBe(reads);
  });
});

describe('rollout approve', () => {
  it("approves the current wave's manual gate once; a repeat is unchanged and writes nothing", async () => {
    putRollout(store, {}, AWAITING);
    const first = await run('rollout', 'approve', NAME, '--json');
    expect(first).toMatchObject({ exitCode: 0, document: { approval: { wave: 'canary', changed: true } } });
    expect(store.peek(NAME)?.annotations[ANNOTATION_APPROVE_WAVE]).toBe('canary');
    const writes = store.patches.length;
    const again = await run('rollout', 'approve', NAME, '--json');
    expect(again).toMatchObject({ exitCode: 0, document: { approval: { wave: 'canary', changed: false } } });
    expect(store.patches.length).toBe(writes);
  });

  it('refuses a wave without a manual gate, a halted rollout and one not reported on, writing nothing', async () => {
    putRollout(store, {}, { ...AWAITING, phase: 'Baking', currentWave: 'early' }, 'auto-gate');
    putRollout(store, {}, HALTED_STATUS, 'halted');
    putRollout(store, {}, undefined, 'fresh');
    for (const name of ['auto-gate', 'halted', 'fresh']) {
      expect(await run('rollout', 'approve', name, '--json')).toMatchObject({
        exitCode: 2,
        code: 'E_TRANSITION_REFUSED',
      });
    }
    expect(await run('rollout', 'approve', 'missing', '--json')).toMatchObject({ exitCode: 1, code: 'E_NOT_FOUND' });
    expect(store.patches).toEqual([]);
  });
});

describe('release quarantine and unquarantine', () => {
  const quarantineOf = () => store.peekRelease(RELEASE)?.spec['quarantine'];

  it('quarantines with a reason, lifts it, and leaves an unchanged release alone', async () => {
    const set = await run('release', 'quarantine', RELEASE, '--reason', 'kubelet restarts', '--json');
    expect(set).toMatchObject({ exitCode: 0, document: { release: { changed: true } } });
    expect(quarantineOf()).toEqual({ quarantined: true, reason: 'kubelet restarts' });
    const repeat = await run('release', 'quarantine', RELEASE, '--reason', 'other', '--json');
    expect(repeat).toMatchObject({ exitCode: 0, document: { release: { changed: false } } });
    expect(quarantineOf()).toEqual({ quarantined: true, reason: 'kubelet restarts' });
    const lifted = await run('release', 'unquarantine', RELEASE, '--json');
    expect(lifted).toMatchObject({ exitCode: 0, document: { release: { changed: true } } });
    expect(quarantineOf()).toEqual({ quarantined: false, reason: '' });
  });

  it('refuses a missing reason, a reason too long and a missing release, changing nothing', async () => {
    expect((await run('release', 'quarantine', RELEASE)).exitCode).toBe(2);
    const long = await run('release', 'quarantine', RELEASE, '--reason', 'x'.repeat(1025), '--json');
    expect(long).toMatchObject({ exitCode: 2, code: 'E_USAGE' });
    const missing = await run('release', 'quarantine', 'no-such', '--reason', 'r', '--json');
    expect(missing).toMatchObject({ exitCode: 1, code: 'E_NOT_FOUND' });
    expect(quarantineOf()).toBeUndefined();
    expect(store.patches).toEqual([]);
  });

  it('reads again and decides again when the release changed in between (409)', async () => {
    store.putRelease(RELEASE, {
      version: 'v1.4.2',
      artifacts: [],
      quarantine: { quarantined: true, reason: 'a halt' },
    });
    // A second halt writes its reason right after the command read the release: the lift is decided again.
    store.interfereRelease((spec) => ({ ...spec, quarantine: { quarantined: true, reason: 'a second halt' } }));
    const lifted = await run('release', 'unquarantine', RELEASE, '--reason', 'fixed', '--json');
    expect(lifted).toMatchObject({ exitCode: 0, document: { release: { changed: true, attempts: 2 } } });
    expect(quarantineOf()).toEqual({ quarantined: false, reason: 'fixed' });
  });
});
