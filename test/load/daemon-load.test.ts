import { describe, expect, it } from 'vitest';
import { runDaemonLoad } from '../support/kube/load-world.js';
import { assertBuildCurrent } from '../support/systemd/systemd-host.js';

/**
 * Correctness under load (the full-size run with memory figures is `npm run bench:daemon`):
 * many other machines' operations are never touched, ours each end in exactly one terminal
 * status, and the API requests per upgrade stay constant (not proportional to the cluster).
 */
describe('the daemon under load', () => {
  it.each([true, false])(
    '300 operations for other machines, 10 upgrades of ours (server-side field selector: %s)',
    async (selectableFields) => {
      assertBuildCurrent();
      const result = await runDaemonLoad({ others: 300, ours: 10, selectableFields });
      expect({
        completed: result.completed,
        notExactlyOnce: result.notExactlyOnce,
        othersTouched: result.othersTouched,
      }).toEqual({ completed: 10, notExactlyOnce: [], othersTouched: 0 });
      // Per upgrade: a few GETs and PATCHes of our own object, no re-listing of the cluster.
      expect(result.requestsPerUpgrade['GET'] ?? 0).toBeLessThanOrEqual(6);
      expect(result.requestsPerUpgrade['PATCH'] ?? 0).toBeLessThanOrEqual(3);
      expect(result.watchRequests).toBeLessThanOrEqual(2);
      // Graceful shutdown: SIGTERM ends the watch and the process promptly, with exit 0.
      expect(result.shutdown.code).toBe(0);
      expect(result.shutdown.afterMs).toBeLessThan(5_000);
    },
    120_000,
  );
});
