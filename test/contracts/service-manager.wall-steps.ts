import { describe, expect, it } from 'vitest';
import type { Context } from './service-manager.contract.js';

const DAY_MS = 86_400_000;

/**
 * The clock rule (docs/protocol.md#the-two-clocks) on every service manager: the health wait
 * measures stability and its deadline on the monotonic clock, so a wall clock stepped a day
 * either way in the middle of it changes neither the verdict nor how long it takes. The step is
 * made while the wait sleeps after a poll that saw the agent run, the moment a wall-clock wait
 * took for "stable for a day".
 */
export function wallStepCases(context: Context): void {
  describe('waitHealthy across a wall-clock step', () => {
    it('stepped forward, a build that exits before it was stable is still unhealthy', async () => {
      const services = await context.running(context.builds.exiting);
      context.clock.duringNextSleep(() => context.clock.stepWall(DAY_MS));
      expect((await services.waitHealthy(context.builds.exiting, context.health)).kind).toBe('unhealthy');
    });

    it.each([DAY_MS, -DAY_MS])(
      'stepped by %i ms, a healthy build is accepted after stableMs, no sooner or later',
      async (deltaMs) => {
        const services = await context.running(context.builds.blue);
        context.clock.duringNextSleep(() => context.clock.stepWall(deltaMs));
        const startMs = context.clock.monotonicMs();
        expect(await services.waitHealthy(context.builds.blue, context.health)).toEqual({ kind: 'healthy' });
        expect(context.elapsedSince(startMs)).toBeGreaterThanOrEqual(context.health.stableMs);
        expect(context.elapsedSince(startMs)).toBeLessThan(context.health.timeoutMs);
      },
    );

    it('stepped back, a wait that cannot succeed still ends at its deadline', async () => {
      const services = await context.running(context.builds.blue);
      const limits = context.brief();
      context.clock.duringNextSleep(() => context.clock.stepWall(-DAY_MS));
      const startMs = context.clock.monotonicMs();
      expect((await services.waitHealthy(context.builds.green, limits)).kind).toBe('unhealthy');
      expect(context.elapsedSince(startMs)).toBeGreaterThanOrEqual(limits.timeoutMs);
      expect(context.elapsedSince(startMs)).toBeLessThan(limits.timeoutMs + context.fixture.settleMs);
    });
  });
}
