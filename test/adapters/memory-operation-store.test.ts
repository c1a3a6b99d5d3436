import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import { ClusterError } from '../../src/domain/common/port-errors.js';
import type { AgentUpgradeRequest, TerminalStatus } from '../../src/ports/node/operation-store.js';
import { caught } from './memory-adapter-fixtures.js';

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
