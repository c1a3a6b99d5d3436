/**
 * Version evidence for fleet rollouts, on the memory platform through the production composition:
 * each daemon reports the agent version it runs to its Node once its startup gate is open — at
 * start, after Complete, after a rollback — once per change, and a report that fails never fails
 * the gate or the upgrade (it is retried beside the daemon's work).
 */
import { describe, expect, it } from 'vitest';
import type { DaemonExit } from '../../src/app/node/daemon/run-daemon.js';
import type { Result } from '../../src/domain/common/failure.js';
import { SteppedClock } from '../support/stepped-clock.js';
import { agentScript, CONFIG, digestOf, LAYOUT, ManagedWorld, SIDECAR_CONFIG } from './managed-world.js';
import { orThrow } from './sim-process.js';

const reports = (world: ManagedWorld) => world.store.versionReports;
const requests = (world: ManagedWorld) => world.store.requestCount.reportAgentVersion;

function operationFor(world: ManagedWorld, name: string, version: string) {
  const release = world.publishRelease(version);
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  return { operation: world.store.create({ name, parameters }), phase: null, parameters };
}

/** A self-hosted upgrade up to the hand-over; the unit then restarts into the candidate. */
async function handOver(world: ManagedWorld, name: string, version: string): Promise<void> {
  expect(await world.daemon().handler.handle(operationFor(world, name, version))).toEqual({ kind: 'handed-over' });
  expect(await world.services.performScheduledRestarts()).toBe(1);
}

/** The production daemon loop on virtual time (as test/sim/daemon-loop.test.ts runs it). */
function runDaemon(world: ManagedWorld, clock: SteppedClock, selfExecutable: string | null) {
  const stop = new AbortController();
  let exit: Result<DaemonExit> | null = null;
  const running = world
    .process(CONFIG, { clock })
    .daemon(stop.signal, { selfExecutable })
    .then((result) => (exit = result));
  return { stop: () => stop.abort(), running, exited: () => exit !== null };
}

describe('the agent version a daemon reports to its Node', () => {
  it('is written once the gate opens at start, and not again by the same process when unchanged', async () => {
    const world = new ManagedWorld();
    const daemon = world.daemon();
    expect(await daemon.start()).toEqual({ kind: 'open' });
    expect(reports(world)).toEqual(['1.0.0']);
    expect(await daemon.start()).toEqual({ kind: 'open' });
    expect(requests(world)).toBe(1);
    // A new process knows nothing of what an earlier one wrote: one write per daemon start.
    expect(await world.daemon().start()).toEqual({ kind: 'open' });
    expect(reports(world)).toEqual(['1.0.0', '1.0.0']);
  });

  it('is the candidate version after Complete, written by the restarted daemon', async () => {
    const world = new ManagedWorld();
    expect(await world.daemon().start()).toEqual({ kind: 'open' });
    await handOver(world, 'up', '2.0.0');
    // The old process handed over without writing anything more.
    expect(reports(world)).toEqual(['1.0.0']);
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.store.get('up')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(reports(world)).toEqual(['1.0.0', '2.0.0']);
  });

  it('is the old version again after a rollback (a crash-looping candidate recovered to last-good)', async () => {
    const world = new ManagedWorld();
    world.behaviours.set(digestOf(agentScript('2.0.0')), 'crash-on-start');
    await handOver(world, 'up', '2.0.0');
    expect(await world.daemon().recover('upgraded daemon failed repeatedly')).toMatchObject({ rolledBackTo: 'blue' });
    expect(reports(world)).toEqual([]);
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.store.get('up')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(reports(world)).toEqual(['1.0.0']);
  });

  it('follows a sidecar through Complete, and a rollback back to what it last wrote costs no request', async () => {
    const world = new ManagedWorld();
    world.behaviours.set(digestOf(agentScript('3.0.0')), 'crash-on-start');
    await world.services.restart();
    const daemon = world.daemon(null, SIDECAR_CONFIG);
    expect(await daemon.start()).toEqual({ kind: 'open' });
    expect(await daemon.handler.handle(operationFor(world, 'to-2', '2.0.0'))).toEqual({ kind: 'gate' });
    expect(await daemon.start()).toEqual({ kind: 'open' });
    expect(world.store.get('to-2')?.phase).toBe('Complete');
    expect(reports(world)).toEqual(['1.0.0', '2.0.0']);

    expect(await daemon.handler.handle(operationFor(world, 'to-3', '3.0.0'))).toEqual({ kind: 'gate' });
    expect(await daemon.start()).toEqual({ kind: 'open' });
    expect(world.store.get('to-3')).toMatchObject({ phase: 'Failed' });
    expect(reports(world)).toEqual(['1.0.0', '2.0.0']);
    expect(requests(world)).toBe(2);
  });

  it('is not written when the running binary does not say its version', async () => {
    const world = new ManagedWorld('unversioned');
    expect(await world.daemon().start()).toEqual({ kind: 'open' });
    expect(requests(world)).toBe(0);
  });
});

describe('a version report that fails', () => {
  it('fails neither the gate nor the upgrade: Complete is published, the record goes, the write stays pending', async () => {
    const world = new ManagedWorld();
    await handOver(world, 'up', '2.0.0');
    world.store.failTimes('reportAgentVersion', 2, { status: 503 });
    const upgrader = world.process();
    const session = orThrow(
      upgrader.managed({ store: world.store, selfExecutable: await world.services.mainExecutable() }),
    );
    expect(orThrow(await session.start())).toEqual({ kind: 'open' });
    expect(world.store.get('up')).toMatchObject({ phase: 'Complete', reason: 'Succeeded' });
    expect(world.store.terminalWrites('up')).toBe(1);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(session.versionReportPending).toBe(true);
    expect(await session.retryVersionReport()).toEqual({ ok: true, value: 'failed' });
    expect(await session.retryVersionReport()).toEqual({ ok: true, value: 'written' });
    expect(session.versionReportPending).toBe(false);
    expect(await session.retryVersionReport()).toEqual({ ok: true, value: 'unchanged' });
    expect(reports(world)).toEqual(['2.0.0']);
  });

  it('is retried by the daemon loop with backoff until written, while the daemon keeps working', async () => {
    const world = new ManagedWorld();
    await world.services.restart();
    world.store.failTimes('reportAgentVersion', 2, { status: null });
    const clock = new SteppedClock();
    const started = clock.nowMs();
    const daemon = runDaemon(world, clock, await world.services.mainExecutable());
    await clock.runUntil(() => reports(world).length === 1);
    expect(reports(world)).toEqual(['1.0.0']);
    expect(requests(world)).toBe(3);
    // Retried after 5 s, then 10 s: the retry policy's backoff, on the daemon's clock.
    expect(clock.nowMs() - started).toBe(15_000);
    expect(world.store.requestCount.watch).toBe(1);
    expect(daemon.exited()).toBe(false);
    daemon.stop();
    expect(await daemon.running).toEqual({ ok: true, value: { kind: 'stopped' } });
  });

  it('is not retried when the Node refuses it (403) or does not exist (404)', async () => {
    for (const status of [403, 404]) {
      const world = new ManagedWorld();
      await world.services.restart();
      world.store.failNext('reportAgentVersion', { status });
      const clock = new SteppedClock();
      const daemon = runDaemon(world, clock, await world.services.mainExecutable());
      await clock.runUntil(() => world.store.requestCount.watch > 0);
      expect(clock.sleepers).toBe(0);
      expect(requests(world)).toBe(1);
      expect(reports(world)).toEqual([]);
      daemon.stop();
      expect(await daemon.running).toEqual({ ok: true, value: { kind: 'stopped' } });
    }
  });
});
