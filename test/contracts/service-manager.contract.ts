import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HealthLimits, ServiceActivity, ServiceManager } from '../../src/ports/node/service-manager.js';
import { restartCountCases } from './service-manager.restart-count.js';
import { wallStepCases } from './service-manager.wall-steps.js';
import { holdsFor, within, type SteppedClock } from './service-manager.support.js';

/** Real paths of the builds a service can run, each with a behaviour of its own. */
export interface ContractBuilds {
  /** Two healthy builds: they start and keep running. */
  readonly blue: string;
  readonly green: string;
  /** Exits with a failure at once on every start: the manager restarts it until it gives up. */
  readonly crashing: string;
  /** Starts, then exits with a failure before any `health.stableMs` passed. */
  readonly exiting: string;
}

export type GivenState =
  /** No such service. */
  | 'absent'
  /** Installed, and stopped on purpose (a reset or rejoined host). */
  | 'inactive'
  /** Started: it runs what the link names. */
  | 'running'
  /** Started with the link on the crashing build; how the loop runs and ends is the manager's own. */
  | 'crash-loop';

export interface ServiceManagerFixture {
  /** The clock the adapter under test was built with; the suite's own bounded waits run on it too. */
  readonly clock: SteppedClock;
  readonly builds: ContractBuilds;
  /**
   * Health limits this adapter's agents settle within: a healthy build is stable well inside
   * them, and the manager gives up on a crash loop before `timeoutMs`.
   */
  readonly health: HealthLimits;
  /** Bound on what a manager does on its own: an agent started, a crash loop ended failed. */
  readonly settleMs: number;
  /** Bound on a scheduled restart: by then it ran (the adapter's delay, and a margin). */
  readonly scheduledWithinMs: number;
  /** Points the link the service's ExecStart names at `build`, atomically, as a switch does. */
  point(build: string): Promise<void>;
  /** Brings the service into `state` and returns the adapter under test. */
  given(state: GivenState): Promise<ServiceManager>;
  /** Lets the restarts `scheduleRestart` asked for run: a real manager runs them itself. */
  runScheduledRestarts(): Promise<void>;
  cleanup(): Promise<void>;
}

/** What every case works with: the fixture of the case that runs, and helpers over it. */
export class Context {
  private current: ServiceManagerFixture | null = null;

  set(fixture: ServiceManagerFixture | null): void {
    this.current = fixture;
  }

  get fixture(): ServiceManagerFixture {
    if (this.current === null) throw new Error('no fixture: the case runs outside the contract');
    return this.current;
  }

  get clock(): SteppedClock {
    return this.fixture.clock;
  }

  get builds(): ContractBuilds {
    return this.fixture.builds;
  }

  get health(): HealthLimits {
    return this.fixture.health;
  }

  /** The shortest wait the configuration allows: one stable interval and one poll. */
  brief(): HealthLimits {
    return { ...this.health, timeoutMs: this.health.stableMs + this.health.pollMs };
  }

  /** Time that really passed since a `monotonicMs` reading. */
  elapsedSince(startMs: number): number {
    return this.clock.monotonicMs() - startMs;
  }

  runs(services: ServiceManager, build: string): () => Promise<boolean> {
    return () => services.mainExecutable().then((path) => path === build);
  }

  hasActivity(services: ServiceManager, activity: ServiceActivity): () => Promise<boolean> {
    return () => services.activity().then((seen) => seen === activity);
  }

  /** The service started on `build`, once it runs it (bounded). */
  async running(build: string): Promise<ServiceManager> {
    await this.fixture.point(build);
    const services = await this.fixture.given('running');
    expect(await within(this.clock, this.runs(services, build), this.fixture.settleMs)).toBe(true);
    return services;
  }
}

/**
 * Behaviour every ServiceManager that runs an agent must show (the port's documentation, and
 * systemd's semantics the others follow). Assertions are on verdict kinds, activity and the
 * main executable only; how each manager gets there is its fixture's business.
 */
export function serviceManagerContract(name: string, make: () => Promise<ServiceManagerFixture>): void {
  describe(`ServiceManager contract: ${name}`, () => {
    const context = new Context();
    beforeEach(async () => {
      context.set(await make());
    });
    afterEach(async () => {
      await context.fixture.cleanup();
      context.set(null);
    });

    restartCases(context);
    scheduleRestartCases(context);
    it('mainExecutable names the real path the main process runs, not the link', async () => {
      const services = await context.running(context.builds.green);
      expect(await services.mainExecutable()).toBe(context.builds.green);
    });
    it('currentRun: each restart is a new run, or the manager keeps no runs at all', async () => {
      const services = await context.running(context.builds.green);
      const runs = [await services.currentRun()];
      expect(await services.restart({ resetFailed: true })).toEqual({ restarted: true });
      runs.push(await services.currentRun());
      const keepsNone = runs.every((run) => run === null);
      const newRun = runs.every((run) => run !== null) && runs[0] !== runs[1];
      expect(keepsNone || newRun, JSON.stringify(runs)).toBe(true);
    });
    restartCountCases(context);
    healthCases(context);
    wallStepCases(context);
    abortCases(context);
  });
}

function restartCases(context: Context): void {
  describe('restart', () => {
    it('an absent service stays absent and stopped, with or without resetFailed', async () => {
      const services = await context.fixture.given('absent');
      expect(await services.restart()).toEqual({ restarted: false });
      expect(await services.restart({ resetFailed: true })).toEqual({ restarted: false });
      expect(await services.activity()).toBe('absent');
      expect(await services.mainExecutable()).toBeNull();
    });

    it('an inactive service stays stopped', async () => {
      await context.fixture.point(context.builds.blue);
      const services = await context.fixture.given('inactive');
      expect(await services.activity()).toBe('inactive');
      expect(await services.restart()).toEqual({ restarted: false });
      expect(await services.activity()).toBe('inactive');
      expect(await services.mainExecutable()).toBeNull();
    });

    it('a running service restarts into the build the link names now', async () => {
      const { fixture, builds, clock } = context;
      const services = await context.running(builds.blue);
      await fixture.point(builds.green);
      expect(await services.restart()).toEqual({ restarted: true });
      expect(await within(clock, context.runs(services, builds.green), fixture.settleMs)).toBe(true);
      expect(await services.activity()).toBe('active');
    });

    it('a failed service is reset and restarted with resetFailed, into the build the link names', async () => {
      const { fixture, builds, clock } = context;
      await fixture.point(builds.crashing);
      const services = await fixture.given('crash-loop');
      expect(await within(clock, context.hasActivity(services, 'failed'), fixture.settleMs)).toBe(true);
      await fixture.point(builds.blue);
      expect(await services.restart({ resetFailed: true })).toEqual({ restarted: true });
      expect(await services.waitHealthy(builds.blue, context.health)).toEqual({ kind: 'healthy' });
      expect(await services.activity()).toBe('active');
    });
  });
}

function scheduleRestartCases(context: Context): void {
  describe('scheduleRestart', () => {
    it('returns before the restart happens; the restart then happens', async () => {
      const { fixture, builds, clock } = context;
      const services = await context.running(builds.blue);
      await fixture.point(builds.green);
      await services.scheduleRestart();
      expect(await services.mainExecutable()).toBe(builds.blue);
      await fixture.runScheduledRestarts();
      expect(await within(clock, context.runs(services, builds.green), fixture.scheduledWithinMs)).toBe(true);
      expect(await services.activity()).toBe('active');
    });

    it('leaves a service stopped before the restart ran stopped (a try-restart)', async () => {
      const { fixture, builds, clock } = context;
      await fixture.point(builds.blue);
      const services = await fixture.given('inactive');
      await services.scheduleRestart();
      await fixture.runScheduledRestarts();
      expect(await holdsFor(clock, context.hasActivity(services, 'inactive'), fixture.scheduledWithinMs)).toBe(true);
      expect(await services.mainExecutable()).toBeNull();
    });
  });
}

function healthCases(context: Context): void {
  describe('waitHealthy', () => {
    it('healthy: the expected build ran without interruption for stableMs', async () => {
      const services = await context.running(context.builds.blue);
      const startMs = context.clock.monotonicMs();
      expect(await services.waitHealthy(context.builds.blue, context.health)).toEqual({ kind: 'healthy' });
      expect(context.elapsedSince(startMs)).toBeGreaterThanOrEqual(context.health.stableMs);
    });

    it('unhealthy: a crash loop, judged as soon as the manager gave up', async () => {
      const { fixture, builds, health } = context;
      await fixture.point(builds.crashing);
      const services = await fixture.given('crash-loop');
      const startMs = context.clock.monotonicMs();
      expect((await services.waitHealthy(builds.crashing, health)).kind).toBe('unhealthy');
      expect(context.elapsedSince(startMs)).toBeLessThan(health.timeoutMs);
    });

    it('unhealthy: a build that exits before it was stable', async () => {
      await context.fixture.point(context.builds.exiting);
      const services = await context.fixture.given('running');
      expect((await services.waitHealthy(context.builds.exiting, context.health)).kind).toBe('unhealthy');
    });

    it('unhealthy: the agent runs another path than the expected one, judged at the deadline', async () => {
      const services = await context.running(context.builds.blue);
      const limits = context.brief();
      const startMs = context.clock.monotonicMs();
      expect((await services.waitHealthy(context.builds.green, limits)).kind).toBe('unhealthy');
      expect(context.elapsedSince(startMs)).toBeGreaterThanOrEqual(limits.timeoutMs);
    });

    it('not-running: an absent service, and an inactive one', async () => {
      const { fixture, builds } = context;
      const absent = await fixture.given('absent');
      expect(await absent.waitHealthy(builds.blue, context.brief())).toEqual({ kind: 'not-running' });
      await fixture.point(builds.blue);
      const inactive = await fixture.given('inactive');
      expect(await inactive.waitHealthy(builds.blue, context.brief())).toEqual({ kind: 'not-running' });
    });
  });
}

function abortCases(context: Context): void {
  describe('waitHealthy with a signal', () => {
    it('an aborted signal ends the wait at the next poll, not healthy', async () => {
      const services = await context.running(context.builds.blue);
      // Long enough that only the abort can end the wait before another poll is due.
      const limits = { timeoutMs: 30_000, stableMs: 20_000, pollMs: 1_000 };
      const controller = new AbortController();
      context.clock.duringNextSleep(() => controller.abort());
      const startMs = context.clock.monotonicMs();
      const verdict = await services.waitHealthy(context.builds.blue, limits, { signal: controller.signal });
      expect(verdict.kind).not.toBe('healthy');
      expect(context.elapsedSince(startMs)).toBeGreaterThanOrEqual(limits.pollMs);
      expect(context.elapsedSince(startMs)).toBeLessThan(2 * limits.pollMs);
    });

    it('a signal aborted before the wait ends it before any poll, not healthy', async () => {
      const services = await context.running(context.builds.blue);
      const startMs = context.clock.monotonicMs();
      const verdict = await services.waitHealthy(context.builds.blue, context.health, { signal: AbortSignal.abort() });
      expect(verdict.kind).not.toBe('healthy');
      expect(context.elapsedSince(startMs)).toBeLessThan(context.health.pollMs);
    });
  });
}
