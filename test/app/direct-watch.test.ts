import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryHealthProbe } from '../../src/adapters/node/memory/memory-health-probe.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import type { Clock } from '../../src/ports/common/clock.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';
import {
  FLEX_SANDBOX_PATHS as P,
  sandboxUpgrader,
  scriptAgent as agent,
  digestOf,
  stageCandidate,
  modelledServices,
} from '../support/sandbox-upgrader.js';

const WINDOW_MS = 60_000;
const WATCH = '/etc/aks-flex-node/agent-upgrade-watch.json';
const MARKER = '/etc/aks-flex-node/agent-upgrade-activation.json';

/** SIGKILL as far as the process can tell: thrown from a clock the first time `when` holds. */
class ProcessKilled extends Error {}
class KilledWhen implements Clock {
  private fired = false;
  when: () => boolean = () => false;
  constructor(private readonly inner: MemoryClock) {}
  nowMs(): number {
    return this.inner.nowMs();
  }
  monotonicMs(): number {
    return this.inner.monotonicMs();
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (!this.fired && this.when()) {
      this.fired = true;
      throw new ProcessKilled('killed');
    }
    return this.inner.sleep(ms, signal);
  }
}

/** `activate` with `health.watchMs` over real files; the modelled unit runs each binary as its behaviour says. */
describe('the watch window on the direct path', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let behaviours: Map<string, AgentBehaviour>;
  let clock: MemoryClock;
  /** The unit's health waits run on it: where a watching process spends its time, so where it dies. */
  let serviceClock: KilledWhen;
  let services: MemoryServiceManager;
  const at = (path: string): string => join(scratch.root, path);
  const health = (watchMs: number): UpgraderConfig['health'] => ({ ...FLEX_PROFILE.health, watchMs });

  const upgrader = (watchMs: number): Upgrader =>
    sandboxUpgrader(
      scratch.root,
      { agent: { ...FLEX_PROFILE.agent, allowScripts: true }, health: health(watchMs) },
      { serviceManager: services, healthProbe: new MemoryHealthProbe({ services: () => services }), clock },
    );
  const newServices = (): MemoryServiceManager => modelledServices(at, behaviours, serviceClock);
  const stage = (version: string, behaviour: AgentBehaviour = 'healthy'): string =>
    stageCandidate(at, behaviours, version, behaviour);
  const state = () =>
    JSON.parse(readFileSync(at(P.state), 'utf8')) as {
      quarantine: string[];
      slots: Record<string, { version: string | null }>;
    };
  const watchedMs = (): number =>
    existsSync(at(WATCH)) ? (JSON.parse(readFileSync(at(WATCH), 'utf8')) as { watchedMs: number }).watchedMs : 0;

  beforeEach(() => {
    scratch = makeScratch();
    behaviours = new Map();
    clock = new MemoryClock();
    serviceClock = new KilledWhen(clock);
    services = newServices();
    writeExecutable(at(P.entry), agent('1.0.0'));
  });
  afterEach(() => scratch.cleanup());

  it('activates a candidate that stayed healthy for the whole window, and leaves no document behind', async () => {
    const startedMs = clock.monotonicMs();
    const result = await upgrader(WINDOW_MS).activate({ candidatePath: stage('2.0.0') });
    expect(result).toMatchObject({ ok: true, value: { outcome: 'activated', to: 'green' } });
    expect(clock.monotonicMs() - startedMs).toBeGreaterThanOrEqual(WINDOW_MS);
    expect(state().slots['green']?.version).toBe('2.0.0');
    expect([existsSync(at(WATCH)), existsSync(at(MARKER))]).toEqual([false, false]);
  });

  it('rolls back an agent that passes the gate and dies 20 s in, which the gate alone let through', async () => {
    const candidate = stage('2.0.0', 'crash-after-20s');
    expect(await upgrader(0).activate({ candidatePath: candidate })).toMatchObject({
      ok: true,
      value: { outcome: 'activated' },
    });
    scratch.cleanup();
    scratch = makeScratch();
    writeExecutable(at(P.entry), agent('1.0.0'));
    services = newServices();
    const result = await upgrader(WINDOW_MS).activate({ candidatePath: stage('2.0.0', 'crash-after-20s') });
    expect(result).toMatchObject({
      ok: false,
      failure: { code: 'E_UNHEALTHY' },
      activation: { outcome: 'rolled-back', quarantined: true },
    });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-blue');
    expect(state().quarantine).toEqual([digestOf(agent('2.0.0'))]);
    expect([existsSync(at(WATCH)), existsSync(at(MARKER))]).toEqual([false, false]);
  });

  it('a window cut short by SIGKILL is watched to its end by the next lock holder, then committed', async () => {
    serviceClock.when = () => watchedMs() >= 12_000;
    await expect(upgrader(WINDOW_MS).activate({ candidatePath: stage('2.0.0') })).rejects.toBeInstanceOf(ProcessKilled);
    expect([existsSync(at(WATCH)), existsSync(at(MARKER))]).toEqual([true, true]);
    const resumedMs = clock.monotonicMs();
    expect(await upgrader(WINDOW_MS).migrate()).toMatchObject({ ok: true });
    expect(clock.monotonicMs() - resumedMs).toBeLessThan(WINDOW_MS);
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-green');
    expect(state().slots['green']?.version).toBe('2.0.0');
    expect([existsSync(at(WATCH)), existsSync(at(MARKER))]).toEqual([false, false]);
  });

  it('a window cut short by a crash the service manager restarted is rolled back and quarantined', async () => {
    serviceClock.when = () => watchedMs() >= 12_000;
    await expect(upgrader(WINDOW_MS).activate({ candidatePath: stage('2.0.0') })).rejects.toBeInstanceOf(ProcessKilled);
    await services.crashAndRestart();
    expect(await upgrader(WINDOW_MS).migrate()).toMatchObject({ ok: true });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-blue');
    expect(state().quarantine).toEqual([digestOf(agent('2.0.0'))]);
    expect([existsSync(at(WATCH)), existsSync(at(MARKER))]).toEqual([false, false]);
  });
});
