import { dueMeasurements } from '../../../domain/fleet/decide/analysis-run.js';
import type { Measurement, RolloutSnapshot } from '../../../domain/fleet/order/snapshot.js';
import { parseRolloutSpec } from '../../../domain/fleet/spec/parse-rollout-spec.js';
import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { MetricsQuery } from '../../../ports/fleet/metrics-query.js';

/** One query may hold a reconcile this long; the others of the plan run beside it. */
export const MEASUREMENT_TIMEOUT_MS = 10_000;

/** A controller built without a Prometheus client: every measurement is an error the analysis counts. */
export const NO_METRICS_QUERY: MetricsQuery = {
  instant: () =>
    Promise.resolve({ ok: false, code: 'E_ANALYSIS_UNAVAILABLE', message: 'this controller has no Prometheus client' }),
};

/**
 * Takes the measurements a rollout's analyses have due (analysis-run.ts decides which, from the
 * spec and the status alone), all at once, each stamped with the wall clock when its answer came.
 * The planner records them; a plan whose status update is refused loses them, and they are due
 * again at the next reconcile.
 */
export class AnalysisMeasurer {
  constructor(private readonly d: { readonly query: MetricsQuery; readonly clock: Clock; readonly logger: Logger }) {}

  async measure(snapshot: RolloutSnapshot, nowMs: number, signal?: AbortSignal): Promise<Measurement[]> {
    const spec = parseRolloutSpec(snapshot.rollout.spec);
    if (!spec.ok) return [];
    const due = dueMeasurements(spec.value, readPreviousStatus(snapshot.rollout.status), nowMs);
    return Promise.all(
      due.map(async (request): Promise<Measurement> => {
        const result = await this.d.query.instant({
          address: request.address,
          query: request.query,
          timeoutMs: MEASUREMENT_TIMEOUT_MS,
          ...(signal === undefined ? {} : { signal }),
        });
        if (!result.ok)
          this.d.logger.warn(
            { rollout: snapshot.rollout.name, wave: request.wave, metric: request.metric, code: result.code },
            `A measurement could not be taken: ${result.message}`,
          );
        const { wave, metric, index } = request;
        return { wave, metric, index, atMs: this.d.clock.nowMs(), result };
      }),
    );
  }
}
