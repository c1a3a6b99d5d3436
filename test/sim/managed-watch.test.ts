import { describe, expect, it } from 'vitest';
import type { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import type { AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import { probeFailed } from '../../src/domain/node/health/probe-target.js';
import type { Clock } from '../../src/ports/common/clock.js';
import { resolveInSnapshot } from './host-invariants.js';
import { agentScript, CONFIG, digestOf, LAYOUT, ManagedWorld, SIDECAR_CONFIG, SIM_PROBE } from './managed-world.js';

const WINDOW_MS = 60_000;
/** One success passes the gate: the probe's failures come inside the window. */
const PROBE = { ...SIM_PROBE, successThreshold: 1 };
const SLICE_MS = 6_000;
const watching = (config: UpgraderConfig): UpgraderConfig => ({
  ...config,
  health: { ...config.health, watchMs: WINDOW_MS },
});

/** A process killed at its `killAt`-th sleep: SIGKILL, as far as the process can tell. */
class ProcessKilled extends Error {}
class KilledAtSleep implements Clock {
  private sleeps = 0;
  constructor(
    private readonly inner: MemoryClock,
    private readonly killAt: number,
  ) {}
  nowMs(): number {
    return this.inner.nowMs();
  }
  monotonicMs(): number {
    return this.inner.monotonicMs();
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.sleeps += 1;
    if (this.sleeps === this.killAt) throw new ProcessKilled('killed');
    return this.inner.sleep(ms, signal);
  }
}

/** A self-hosted upgrade to 2.0.0 handed over: the restarted candidate's daemon runs next. */
async function handedOver(): Promise<{ world: ManagedWorld; parameters: Record<string, string> }> {
  const world = new ManagedWorld();
  world.config = watching(CONFIG);
  const release = world.publishRelease('2.0.0');
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name: 'upgrade', parameters });
  expect(await world.daemon().handler.handle({ operation, phase: null, parameters })).toEqual({
    kind: 'handed-over',
  });
  expect(await world.services.performScheduledRestarts()).toBe(1);
  return { world, parameters };
}

/** The candidate's daemon, killed in its third slice (sleeps: the stable interval, then a slice each). */
async function killedInWindow(world: ManagedWorld): Promise<void> {
  const clock = new KilledAtSleep(world.clock, 4);
  const daemon = world.daemon(await world.services.mainExecutable(), world.config, { clock });
  await expect(daemon.start()).rejects.toBeInstanceOf(ProcessKilled);
}

async function watchedMs(world: ManagedWorld): Promise<number | null> {
  const text = await world.fs.readFile(LAYOUT.watch, 4096);
  return text === null ? null : (JSON.parse(new TextDecoder().decode(text)) as { watchedMs: number }).watchedMs;
}

async function quarantine(world: ManagedWorld): Promise<string[]> {
  const text = await world.fs.readFile(LAYOUT.state, 65536);
  return (JSON.parse(new TextDecoder().decode(text ?? new Uint8Array())) as { quarantine: string[] }).quarantine;
}

const currentSlot = (world: ManagedWorld) => resolveInSnapshot(world.fs.snapshot(), LAYOUT.current);

describe('the watch window on the managed path (self-hosted)', () => {
  it('keeps the operation InProgress and Watching until the window ends, then completes', async () => {
    const { world } = await handedOver();
    await killedInWindow(world);
    expect(world.store.get('upgrade')).toMatchObject({ phase: 'InProgress', watching: true });
    expect(await watchedMs(world)).toBe(2 * SLICE_MS);

    // An operator's restart (no crash): the window goes on from its last checkpoint.
    await world.services.restart();
    const startedMs = world.clock.monotonicMs();
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });
    expect(world.clock.monotonicMs() - startedMs).toBeLessThan(WINDOW_MS);
    expect(world.store.get('upgrade')).toMatchObject({ phase: 'Complete', watching: false });
    expect(await world.fs.lstat(LAYOUT.watch)).toBeNull();
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(currentSlot(world)).toBe(LAYOUT.green);
  });

  it('rolls back and quarantines a candidate that crashed inside its window', async () => {
    const { world } = await handedOver();
    await killedInWindow(world);
    // The service manager restarts the crashed agent on its own: that restart is the evidence.
    await world.services.crashAndRestart();
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({
      kind: 'closed',
      reason: 'restart-scheduled',
    });
    expect(await world.services.performScheduledRestarts()).toBe(1);
    expect(await world.daemon(await world.services.mainExecutable()).start()).toEqual({ kind: 'open' });

    expect(world.store.get('upgrade')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed', watching: false });
    expect(world.store.terminalWrites('upgrade')).toBe(1);
    expect(currentSlot(world)).toBe(LAYOUT.blue);
    expect(await quarantine(world)).toEqual([digestOf(agentScript('2.0.0'))]);
    expect(await world.fs.lstat(LAYOUT.watch)).toBeNull();
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
  });
});

/** A sidecar upgrade to 2.0.0 of a 2.0.0 that behaves as `behaviour`: handled, then the same process's gate (row 8). */
async function sidecarUpgrade(config: UpgraderConfig, behaviour: AgentBehaviour): Promise<ManagedWorld> {
  const world = new ManagedWorld();
  world.config = config;
  world.behaviours.set(digestOf(agentScript('2.0.0')), behaviour);
  await world.services.restart();
  const release = world.publishRelease('2.0.0');
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name: 'upgrade', parameters });
  const daemon = world.daemon();
  await daemon.handler.handle({ operation, phase: null, parameters });
  expect(await daemon.start()).toEqual({ kind: 'open' });
  return world;
}

describe('the watch window on the managed path (sidecar)', () => {
  it('rolls back an agent that passes the 3 s gate and dies 20 s in, which the gate alone let through', async () => {
    expect((await sidecarUpgrade(SIDECAR_CONFIG, 'crash-after-20s')).store.get('upgrade')?.phase).toBe('Complete');
    const world = await sidecarUpgrade(watching(SIDECAR_CONFIG), 'crash-after-20s');
    expect(world.store.get('upgrade')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(currentSlot(world)).toBe(LAYOUT.blue);
    expect(await quarantine(world)).toEqual([digestOf(agentScript('2.0.0'))]);
    expect(await world.fs.lstat(LAYOUT.watch)).toBeNull();
  });

  it('completes a healthy agent after the window, with no window configured as before', async () => {
    for (const config of [watching(SIDECAR_CONFIG), SIDECAR_CONFIG]) {
      const world = await sidecarUpgrade(config, 'healthy');
      expect(world.store.get('upgrade')).toMatchObject({ phase: 'Complete', watching: false });
      expect(currentSlot(world)).toBe(LAYOUT.green);
    }
  });
});

describe('the probe inside the watch window', () => {
  /** The probe answers 503 from its `failFrom`-th attempt on. */
  function failingLater(world: ManagedWorld, failFrom: number): void {
    let attempts = 0;
    world.probeFault = () => ((attempts += 1) >= failFrom ? probeFailed('http-status', 'HTTP 503') : null);
  }

  it.each([
    ['self-hosted', CONFIG],
    ['sidecar', SIDECAR_CONFIG],
  ] as const)('rolls back a %s candidate whose probe starts failing after it passed the gate', async (_mode, base) => {
    const world = new ManagedWorld();
    world.config = { ...base, health: { ...base.health, watchMs: WINDOW_MS, probe: PROBE } };
    await world.services.restart();
    // The gate's one success, then a few more inside the window, then 503s for good.
    failingLater(world, 6);
    const release = world.publishRelease('2.0.0');
    const parameters = { downloadURL: release.url, sha256: release.sha256 };
    const operation = world.store.create({ name: 'upgrade', parameters });
    const first = world.daemon();
    await first.handler.handle({ operation, phase: null, parameters });
    for (let round = 0; round < 4 && world.store.get('upgrade')?.phase === 'InProgress'; round += 1) {
      await world.services.performScheduledRestarts();
      const daemon = base.agent.mode === 'sidecar' ? first : world.daemon(await world.services.mainExecutable());
      await daemon.start();
    }
    expect(world.store.get('upgrade')).toMatchObject({ phase: 'Failed', reason: 'DaemonFailed' });
    expect(currentSlot(world)).toBe(LAYOUT.blue);
    expect(await quarantine(world)).toEqual([digestOf(agentScript('2.0.0'))]);
  });
});
