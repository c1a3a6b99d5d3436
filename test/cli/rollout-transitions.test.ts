/**
 * `agent-upgrade rollout pause|resume|abort|rollback NAME` over a MemoryRolloutStore: exit codes,
 * error codes and the rollout's resulting spec (never message text), the resourceVersion
 * precondition and its bounded retry, and every transition the CRD's CEL rules refuse being
 * refused before anything is written.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { MemoryRolloutStore } from '../../src/adapters/fleet/memory/memory-rollout-store.js';
import { runCliInMemory } from '../support/run-cli.js';
import { EXAMPLE, HALT_ID, HALTED_STATUS, NAME, putRollout, runRollout, specOf } from './rollout-cli-fixtures.js';

let store: MemoryRolloutStore;
beforeEach(() => {
  store = new MemoryRolloutStore();
});

const put = (spec: Record<string, unknown> = {}, status?: unknown, name = NAME): void =>
  putRollout(store, spec, status, name);
const rollout = async (...argv: string[]) => runRollout(store, ...argv);
const spec = () => specOf(store);

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
