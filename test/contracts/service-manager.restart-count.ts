import { describe, expect, it } from 'vitest';
import type { RestartObservation } from '../../src/ports/node/service-manager.js';
import type { Context } from './service-manager.contract.js';
import { within } from './service-manager.support.js';

/**
 * What the watch window reads: automatic restarts counted within one epoch. A restart asked for is
 * not a crash; a crash loop is, unless the manager cannot count at all (nulls).
 */
export function restartCountCases(context: Context): void {
  describe('restartCount', () => {
    const crashedSince = (before: RestartObservation, after: RestartObservation): boolean =>
      before.restartEpoch !== null &&
      after.restartEpoch === before.restartEpoch &&
      after.restarts !== null &&
      before.restarts !== null &&
      after.restarts > before.restarts;

    it('a restart asked for does not count as a crash', async () => {
      const services = await context.running(context.builds.green);
      const before = await services.restartCount();
      expect(await services.restart({ resetFailed: true })).toEqual({ restarted: true });
      expect(crashedSince(before, await services.restartCount())).toBe(false);
    });

    it('a crash loop counts as restarts in the epoch it ran in, or the manager counts nothing', async () => {
      await context.fixture.point(context.builds.crashing);
      const looping = await context.fixture.given('crash-loop');
      const { clock, fixture } = context;
      expect(await within(clock, context.hasActivity(looping, 'failed'), fixture.settleMs)).toBe(true);
      const after = await looping.restartCount();
      const countsNothing = after.restartEpoch === null && after.restarts === null;
      expect(countsNothing || (after.restartEpoch !== null && (after.restarts ?? 0) >= 1), JSON.stringify(after)).toBe(
        true,
      );
    });
  });
}
