import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import { MemoryFileSystem, type TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import { MemoryProcessRunner, versionOutcome } from '../../src/adapters/node/memory/memory-process-runner.js';
import { ClusterError, ContainerError } from '../../src/domain/common/port-errors.js';
import type { AgentUpgradeRequest, TerminalStatus } from '../../src/ports/node/operation-store.js';
import type { RunRequest } from '../../src/ports/common/process-runner.js';

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

describe('MemoryClock', () => {
  it('starts at the given epoch, advances on demand and on sleep, without waiting', async () => {
    const clock = new MemoryClock(1_000);
    expect(clock.nowMs()).toBe(1_000);
    clock.advance(500);
    expect(clock.nowMs()).toBe(1_500);
    const started = Date.now();
    await clock.sleep(3_600_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(clock.nowMs()).toBe(3_601_500);
    expect([clock.sleepCount, clock.sleptMs]).toEqual([1, 3_600_000]);
  });

  it('never goes backwards', () => {
    const clock = new MemoryClock(0);
    expect(() => clock.advance(-1)).toThrow(RangeError);
    expect(clock.nowMs()).toBe(0);
  });

  it('rejects with the reason of an already aborted signal and does not advance', async () => {
    const clock = new MemoryClock(0);
    const reason = new Error('stop');
    expect(await caught(clock.sleep(100, AbortSignal.abort(reason)))).toBe(reason);
    expect(clock.nowMs()).toBe(0);
  });

  it('rejects with the reason when the signal aborts during the sleep', async () => {
    const clock = new MemoryClock(0);
    const controller = new AbortController();
    const reason = new Error('shutdown');
    const sleeping = clock.sleep(100, controller.signal);
    controller.abort(reason);
    expect(await caught(sleeping)).toBe(reason);
  });
});

describe('MemoryContainerRootfs', () => {
  const MACHINES = '/var/lib/machines';
  const BINARY = '/usr/local/bin/aks-flex-node';
  const baseTree: TreeSpec = {
    '/opt/new': { file: 'NEW BINARY' },
    '/usr/local/bin/aks-flex-node': { file: 'HOST BINARY', mode: 0o755 },
    '/var/lib/machines/m1/usr/local/bin': { directory: true },
    '/var/lib/machines/bare': { directory: true },
  };

  function make(
    tree: TreeSpec = baseTree,
    maxBytes = 1 << 20,
  ): { fs: MemoryFileSystem; rootfs: MemoryContainerRootfs } {
    const fs = MemoryFileSystem.fromTree(tree);
    const rootfs = new MemoryContainerRootfs({
      fs,
      machinesDir: MACHINES,
      binaryPath: BINARY,
      activeMachine: () => 'm1',
      maxBytes,
    });
    return { fs, rootfs };
  }

  it('installs atomically with mode 0755, logs it, and reports the same digest', async () => {
    const { fs, rootfs } = make();
    expect(await rootfs.activeMachine()).toBe('m1');
    expect(await rootfs.digest('m1')).toBeNull();
    const written = await rootfs.install('m1', '/opt/new');
    expect(written).toEqual({ sha256: sha256Hex('NEW BINARY'), bytes: 10 });
    expect((await fs.lstat(`${MACHINES}/m1${BINARY}`))?.mode).toBe(0o755);
    expect(await rootfs.digest('m1')).toEqual(written);
    expect(rootfs.installs).toEqual([{ machine: 'm1', sha256: written.sha256 }]);
  });

  it('creates missing directories below the machine with 0755', async () => {
    const { fs, rootfs } = make();
    expect(await rootfs.digest('bare')).toBeNull();
    await rootfs.install('bare', '/opt/new');
    expect(await fs.lstat(`${MACHINES}/bare/usr/local`)).toMatchObject({ kind: 'directory', mode: 0o755 });
    expect((await rootfs.digest('bare'))?.sha256).toBe(sha256Hex('NEW BINARY'));
  });

  it('accepts an async activeMachine source', async () => {
    const fs = MemoryFileSystem.fromTree(baseTree);
    const rootfs = new MemoryContainerRootfs({
      fs,
      machinesDir: MACHINES,
      binaryPath: BINARY,
      activeMachine: async () => null,
      maxBytes: 1024,
    });
    expect(await rootfs.activeMachine()).toBeNull();
  });

  it.each(['../m1', 'a/b', '', '.hidden', 'x..y'])(
    'refuses the machine name %j without touching the tree',
    async (machine) => {
      const { fs, rootfs } = make();
      const before = fs.snapshot();
      const install = await caught(rootfs.install(machine, '/opt/new'));
      expect(install).toBeInstanceOf(ContainerError);
      expect((install as ContainerError).code).toBe('invalid-machine');
      expect(((await caught(rootfs.digest(machine))) as ContainerError).code).toBe('invalid-machine');
      expect(fs.snapshot()).toEqual(before);
    },
  );

  it.each([
    ['usr/local/bin', { '/var/lib/machines/evil/usr/local/bin': { symlink: '/usr/local/bin' } }],
    [
      'the binary itself',
      { '/var/lib/machines/evil/usr/local/bin/aks-flex-node': { symlink: '/usr/local/bin/aks-flex-node' } },
    ],
    ['the machine directory', { '/var/lib/machines/evil': { symlink: '/' } }],
  ] as const)('refuses a symlinked %s and leaves the host binary untouched', async (_where, planted) => {
    const { fs, rootfs } = make({ ...baseTree, ...planted });
    const before = fs.snapshot();
    const install = await caught(rootfs.install('evil', '/opt/new'));
    expect(install).toBeInstanceOf(ContainerError);
    expect((install as ContainerError).code).toBe('symlink-refused');
    expect(((await caught(rootfs.digest('evil'))) as ContainerError).code).toBe('symlink-refused');
    expect(fs.snapshot()).toEqual(before);
    expect((await fs.hashFile('/usr/local/bin/aks-flex-node', 1024)).sha256).toBe(sha256Hex('HOST BINARY'));
    expect(rootfs.installs).toEqual([]);
  });

  it('refuses a binary larger than maxBytes (too-large) and writes nothing', async () => {
    const { rootfs } = make(baseTree, 4);
    expect(((await caught(rootfs.install('m1', '/opt/new'))) as ContainerError).code).toBe('too-large');
    expect(await rootfs.digest('m1')).toBeNull();
  });

  it('reports a missing source as io', async () => {
    const { rootfs } = make();
    expect(((await caught(rootfs.install('m1', '/opt/missing'))) as ContainerError).code).toBe('io');
  });

  it('fails the next install or digest once when told to', async () => {
    const { rootfs } = make();
    rootfs.failNext('install');
    expect(((await caught(rootfs.install('m1', '/opt/new'))) as ContainerError).code).toBe('io');
    expect(rootfs.installs).toEqual([]);
    await rootfs.install('m1', '/opt/new');
    rootfs.failNext('digest');
    expect(((await caught(rootfs.digest('m1'))) as ContainerError).code).toBe('io');
    expect((await rootfs.digest('m1'))?.sha256).toBe(sha256Hex('NEW BINARY'));
  });
});

describe('MemoryOperationStore', () => {
  const SUCCEEDED: TerminalStatus = { phase: 'Complete', reason: 'Succeeded', message: 'upgraded to 1.2.3' };
  const FAILED: TerminalStatus = { phase: 'Failed', reason: 'DaemonFailed', message: 'candidate crashed' };

  it('moves an operation through InProgress to a terminal status with timestamps from the clock', async () => {
    const clock = new MemoryClock(Date.UTC(2025, 5, 1));
    const store = new MemoryOperationStore({ clock });
    const ref = store.create({ name: 'up-1', parameters: { version: '1.2.3' } });
    expect(store.get('up-1')).toMatchObject({ phase: null, kind: 'AgentUpgrade', uid: ref.uid, startedAt: null });
    expect(await store.markInProgress(ref, 'upgrading')).toEqual({ kind: 'written' });
    expect(store.get('up-1')).toMatchObject({
      phase: 'InProgress',
      reason: 'InProgress',
      startedAt: '2025-06-01T00:00:00.000Z',
    });
    clock.advance(60_000);
    expect(await store.publish(ref, SUCCEEDED)).toEqual({ kind: 'written' });
    expect(store.get('up-1')).toMatchObject({
      phase: 'Complete',
      reason: 'Succeeded',
      completedAt: '2025-06-01T00:01:00.000Z',
    });
    expect(store.history('up-1').map((entry) => entry.phase)).toEqual(['InProgress', 'Complete']);
    expect(store.terminalWrites('up-1')).toBe(1);
  });

  it('treats InProgress after a terminal status and the same terminal status again as no-ops', async () => {
    const store = new MemoryOperationStore();
    const ref = store.create({ name: 'up-1' });
    await store.publish(ref, FAILED);
    expect(await store.markInProgress(ref, 'again')).toEqual({ kind: 'written' });
    expect(await store.publish(ref, { ...FAILED })).toEqual({ kind: 'written' });
    expect(store.get('up-1')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(store.history('up-1')).toHaveLength(1);
    expect(store.terminalWrites('up-1')).toBe(1);
    expect(store.violations).toEqual([]);
  });

  it('records a different second terminal status as a violation and does not apply it', async () => {
    const store = new MemoryOperationStore();
    const ref = store.create({ name: 'up-1' });
    await store.publish(ref, SUCCEEDED);
    await store.publish(ref, FAILED);
    await store.publish(ref, { ...SUCCEEDED, message: 'another message' });
    expect(store.get('up-1')).toMatchObject({ phase: 'Complete', reason: 'Succeeded', message: SUCCEEDED.message });
    expect(store.violations.map((violation) => violation.attempted)).toEqual([
      FAILED,
      { ...SUCCEEDED, message: 'another message' },
    ]);
    expect(store.violations[0]?.existing).toEqual(SUCCEEDED);
    expect(store.terminalWrites('up-1')).toBe(1);
  });

  it('answers gone for a deleted operation, and for a re-created one with another uid', async () => {
    const store = new MemoryOperationStore();
    const old = store.create({ name: 'up-1' });
    store.delete('up-1');
    expect(await store.markInProgress(old, 'x')).toEqual({ kind: 'gone' });
    expect(await store.publish(old, FAILED)).toEqual({ kind: 'gone' });
    const recreated = store.create({ name: 'up-1' });
    expect(recreated.uid).not.toBe(old.uid);
    expect(await store.publish(old, FAILED)).toEqual({ kind: 'gone' });
    expect(store.get('up-1')?.phase).toBeNull();
    // A ref without a uid matches by name.
    expect(await store.publish({ name: 'up-1', uid: null }, FAILED)).toEqual({ kind: 'written' });
  });

  it('watch yields existing then new Pending AgentUpgrades only, and ends on abort', async () => {
    const store = new MemoryOperationStore();
    store.create({ name: 'existing-pending', phase: 'Pending', parameters: { version: '2.0.0' } });
    store.create({ name: 'existing-new' });
    store.create({ name: 'other-kind', kind: 'NodeReboot' });
    store.create({ name: 'finished', phase: 'Complete' });
    store.create({ name: 'running', phase: 'InProgress' });
    store.create({ name: 'deleted' });
    store.delete('deleted');
    const controller = new AbortController();
    const iterator = store.watch(controller.signal)[Symbol.asyncIterator]();
    const names = async (): Promise<string | null> => {
      const next: IteratorResult<AgentUpgradeRequest> = await iterator.next();
      return next.done === true ? null : next.value.operation.name;
    };
    const first = await iterator.next();
    expect(first.value).toMatchObject({
      operation: { name: 'existing-pending' },
      phase: 'Pending',
      parameters: { version: '2.0.0' },
    });
    expect(await names()).toBe('existing-new');
    const waiting = names();
    store.create({ name: 'later-other', kind: 'NodeReboot', phase: 'Pending' });
    store.create({ name: 'later-failed', phase: 'Failed' });
    store.create({ name: 'later-pending', phase: 'Pending' });
    expect(await waiting).toBe('later-pending');
    const ended = names();
    controller.abort();
    expect(await ended).toBeNull();
  });

  it('watch on an aborted signal yields nothing', async () => {
    const store = new MemoryOperationStore();
    store.create({ name: 'up-1' });
    const seen: string[] = [];
    for await (const request of store.watch(AbortSignal.abort())) seen.push(request.operation.name);
    expect(seen).toEqual([]);
  });

  it('throws injected ClusterErrors without applying them, then succeeds', async () => {
    const store = new MemoryOperationStore();
    const ref = store.create({ name: 'up-1' });
    store.failNext('publish', { status: 409 });
    store.failNext('publish', { status: null });
    store.failNext('publish');
    const statuses: (number | null)[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const error = await caught(store.publish(ref, SUCCEEDED));
      expect(error).toBeInstanceOf(ClusterError);
      statuses.push((error as ClusterError).status);
    }
    expect(statuses).toEqual([409, null, 500]);
    expect(store.get('up-1')?.phase).toBeNull();
    expect(store.history('up-1')).toEqual([]);
    expect(await store.publish(ref, SUCCEEDED)).toEqual({ kind: 'written' });
    expect(store.requestCount).toEqual({ markInProgress: 0, publish: 4, read: 0, reportAgentVersion: 0, watch: 0 });
  });

  it('failTimes fails a method n times in a row', async () => {
    const store = new MemoryOperationStore();
    const ref = store.create({ name: 'up-1' });
    store.failTimes('markInProgress', 2, { status: 503 });
    expect(((await caught(store.markInProgress(ref, 'm'))) as ClusterError).status).toBe(503);
    expect(((await caught(store.markInProgress(ref, 'm'))) as ClusterError).status).toBe(503);
    expect(await store.markInProgress(ref, 'm')).toEqual({ kind: 'written' });
    expect(store.requestCount.markInProgress).toBe(3);
  });

  it('a lost response applies the write, so the retry is a no-op and the status is written once', async () => {
    const store = new MemoryOperationStore();
    const ref = store.create({ name: 'up-1' });
    store.failNext('publish', { status: null, afterWrite: true });
    expect(await caught(store.publish(ref, FAILED))).toBeInstanceOf(ClusterError);
    expect(store.get('up-1')?.phase).toBe('Failed');
    expect(await store.publish(ref, FAILED)).toEqual({ kind: 'written' });
    expect(store.terminalWrites('up-1')).toBe(1);
    expect(store.violations).toEqual([]);
  });

  it('an injected watch failure surfaces from the iterator and is counted', async () => {
    const store = new MemoryOperationStore();
    store.failNext('watch', { status: 410 });
    const error = await caught(store.watch(new AbortController().signal)[Symbol.asyncIterator]().next());
    expect((error as ClusterError).status).toBe(410);
    expect(store.requestCount.watch).toBe(1);
  });
});

describe('MemoryProcessRunner', () => {
  const request = (command: string, extra: Partial<RunRequest> = {}): RunRequest => ({
    command,
    args: ['version'],
    timeoutMs: 5_000,
    outputMaxBytes: 1024,
    ...extra,
  });

  it('fails to spawn unscripted commands (ENOENT) and logs every run', async () => {
    const runner = new MemoryProcessRunner();
    const args = ['version'];
    expect(await runner.run(request('/opt/agent', { args }))).toEqual({ kind: 'spawn-failed', code: 'ENOENT' });
    args.push('mutated');
    expect(runner.runs.map((run) => [run.command, run.args])).toEqual([['/opt/agent', ['version']]]);
  });

  it('plays fixed and computed outcomes per command', async () => {
    const runner = new MemoryProcessRunner();
    runner.setBehaviour('/slots/blue/agent', versionOutcome('1.2.3'));
    runner.setBehaviour('/bin/systemctl', (run) => ({
      kind: 'exited',
      exitCode: run.args.includes('restart') ? 0 : 3,
      stdout: '',
      stderr: '',
    }));
    expect(await runner.run(request('/slots/blue/agent'))).toEqual({
      kind: 'exited',
      exitCode: 0,
      stdout: 'agent version v1.2.3\n',
      stderr: '',
    });
    expect(await runner.run(request('/bin/systemctl', { args: ['restart', 'agent'] }))).toMatchObject({ exitCode: 0 });
    expect(await runner.run(request('/bin/systemctl', { args: ['is-active', 'agent'] }))).toMatchObject({
      exitCode: 3,
    });
    runner.clearBehaviour('/slots/blue/agent');
    expect(await runner.run(request('/slots/blue/agent'))).toMatchObject({ kind: 'spawn-failed' });
    expect(runner.runs).toHaveLength(4);
  });

  it('caps output at outputMaxBytes and reports an aborted run as timed out', async () => {
    const runner = new MemoryProcessRunner();
    runner.setBehaviour('/noisy', {
      kind: 'signalled',
      signal: 'SIGKILL',
      stdout: 'x'.repeat(100),
      stderr: 'y'.repeat(5),
    });
    expect(await runner.run(request('/noisy', { outputMaxBytes: 10 }))).toEqual({
      kind: 'signalled',
      signal: 'SIGKILL',
      stdout: 'x'.repeat(10),
      stderr: 'yyyyy',
    });
    expect(await runner.run(request('/noisy', { signal: AbortSignal.abort() }))).toEqual({ kind: 'timed-out' });
  });
});
