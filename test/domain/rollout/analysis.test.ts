/**
 * Waves gated on metrics: the success condition's grammar, the analysis section's spec problems,
 * and the planner recording measurements in the status, holding the wave in Baking until its
 * analysis succeeded, and halting with AnalysisFailed (the query's value in the message) when it
 * fails; a resume runs the analysis again.
 */
import { describe, expect, it } from 'vitest';
import { dueMeasurements } from '../../../src/domain/fleet/decide/analysis-run.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { evaluateCondition, parseCondition } from '../../../src/domain/fleet/spec/analysis-condition.js';
import { parseRolloutSpec } from '../../../src/domain/fleet/spec/parse-rollout-spec.js';
import type { Measurement, QueryResult } from '../../../src/domain/fleet/order/snapshot.js';
import { readPreviousStatus } from '../../../src/domain/fleet/status/read-rollout-status.js';
import { baseSpec } from './fixtures.js';
import { exampleCluster, finish, later, operationsOf, strategy } from './example-cluster.js';
import type { RolloutWorld } from './rollout-world.js';

const MINUTE = 60_000;

describe('the success condition', () => {
  it.each([
    ['result[0] >= 0.95', [0.97], true],
    ['result[0] >= 0.95', [0.9], false],
    ['result < 5 && len(result) == 1', [3], true],
    ['result < 5 && len(result) == 1', [3, 4], false],
    ['!(result[0] > 100) || result[1] == 0', [200, 0], true],
    ['result[0] <= 1e-3', [0.0005], true],
    ['result[0] > -1', [Number.NaN], false],
    ['result[0] != result[1]', [1, 2], true],
  ])('%s with %j holds: %s', (text, result, holds) => {
    const parsed = parseCondition(text);
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(evaluateCondition(parsed.condition, result)).toEqual({ ok: true, holds });
  });

  it('cannot judge a result without the element it reads', () => {
    const parsed = parseCondition('result[2] > 0');
    expect(parsed.ok && evaluateCondition(parsed.condition, [1]).ok).toBe(false);
  });

  it.each([
    '',
    'result[0] >= ',
    'result >= 0.95 &&',
    'eval("1")',
    'result[0] + 1 > 2',
    'process.exit()',
    'result[-1] > 0',
    '((((((((((((((((((result > 1))))))))))))))))))',
    'result[0] >= 0.95)',
  ])('refuses %j', (text) => {
    expect(parseCondition(text).ok).toBe(false);
  });
});

const METRIC = {
  name: 'error-rate',
  prometheus: { address: 'http://prometheus.monitoring:9090', query: 'sum(rate(agent_errors_total[5m]))' },
  successCondition: 'result[0] < 0.01',
  interval: '1m',
  count: 3,
  failureLimit: 0,
};

describe('the analysis section', () => {
  const problems = (analysis: object, where: 'wave' | 'rollout' = 'wave'): string[] => {
    const spec = baseSpec();
    const base = spec['strategy'] as { waves: object[] };
    const waves = base.waves.map((wave, index) => (where === 'wave' && index === 0 ? { ...wave, analysis } : wave));
    const parsed = parseRolloutSpec({
      ...spec,
      strategy: { ...base, waves, ...(where === 'rollout' && { analysis }) },
    });
    return parsed.ok ? [] : parsed.problems.map((problem) => `${problem.code} ${problem.path}`);
  };

  it('is accepted on a wave and on the rollout, which a wave without one then runs', () => {
    expect(problems({ metrics: [METRIC] })).toEqual([]);
    const spec = baseSpec();
    const parsed = parseRolloutSpec({
      ...spec,
      strategy: { ...(spec['strategy'] as object), analysis: { metrics: [METRIC] } },
    });
    expect(parsed.ok && parsed.value.strategy.waves.map((wave) => wave.analysis?.metrics[0]?.count)).toEqual([3, 3, 3]);
  });

  it.each([
    [
      { metrics: [{ ...METRIC, successCondition: 'result[0] <' }] },
      'E_ROLLOUT_CONDITION spec.strategy.waves[0].analysis.metrics[0].successCondition',
    ],
    [
      { metrics: [{ ...METRIC, prometheus: { ...METRIC.prometheus, address: 'http://user:pw@prometheus:9090' } }] },
      'E_ROLLOUT_ANALYSIS spec.strategy.waves[0].analysis.metrics[0].prometheus.address',
    ],
    [
      { metrics: [{ ...METRIC, prometheus: { ...METRIC.prometheus, query: '' } }] },
      'E_ROLLOUT_ANALYSIS spec.strategy.waves[0].analysis.metrics[0].prometheus.query',
    ],
    [
      { metrics: [{ ...METRIC, interval: '100ms' }] },
      'E_ROLLOUT_ANALYSIS spec.strategy.waves[0].analysis.metrics[0].interval',
    ],
    [{ metrics: [{ ...METRIC, count: 0 }] }, 'E_ROLLOUT_ANALYSIS spec.strategy.waves[0].analysis.metrics[0].count'],
    [{ metrics: [METRIC, METRIC] }, 'E_ROLLOUT_ANALYSIS spec.strategy.waves[0].analysis.metrics[1].name'],
    [{ metrics: [] }, 'E_ROLLOUT_ANALYSIS spec.strategy.waves[0].analysis.metrics'],
    [
      { metrics: [{ ...METRIC, failureLimt: 1 }] },
      'E_FIELD_UNKNOWN spec.strategy.waves[0].analysis.metrics[0].failureLimt',
    ],
  ])('%j is refused: %s', (analysis, problem) => {
    expect(problems(analysis)).toEqual([problem]);
  });
});

/** A cluster whose canary (2 machines, bake 2m) runs METRIC, with the given overrides. */
function analysedCluster(metric: Record<string, unknown> = {}): RolloutWorld {
  return exampleCluster(
    8,
    strategy({
      waves: [
        { name: 'canary', count: 2, maxInFlight: 2, bake: '2m', analysis: { metrics: [{ ...METRIC, ...metric }] } },
        { name: 'rest', percent: 100, maxInFlight: 6 },
      ],
    }),
  );
}

/** Finishes the canary and plans until it bakes; returns the plan that completed it. */
function bakeCanary(world: RolloutWorld): ReturnType<typeof planRollout> {
  world.apply(planRollout(world.snapshot(), world.nowMs, world.memo));
  later(world);
  for (const op of operationsOf(world, 'canary')) finish(world, op, 'Succeeded');
  later(world);
  const plan = planRollout(world.snapshot(), world.nowMs, world.memo);
  world.apply(plan);
  return plan;
}

/** One reconcile as the controller runs it: the due measurements taken with `answer`, then the plan. */
function measureAndPlan(world: RolloutWorld, answer: (index: number) => QueryResult): ReturnType<typeof planRollout> {
  const snapshot = world.snapshot();
  const spec = parseRolloutSpec(snapshot.rollout.spec);
  if (!spec.ok) throw new Error('the spec is invalid');
  const due = dueMeasurements(spec.value, readPreviousStatus(snapshot.rollout.status), world.nowMs);
  const measurements: Measurement[] = due.map((request) => ({
    wave: request.wave,
    metric: request.metric,
    index: request.index,
    atMs: world.nowMs,
    result: answer(request.index),
  }));
  const plan = planRollout({ ...snapshot, measurements }, world.nowMs, world.memo);
  expect(plan).toEqual(planRollout({ ...snapshot, measurements }, world.nowMs));
  world.apply(plan);
  return plan;
}

const value = (...values: number[]): QueryResult => ({ ok: true, values });

describe('an analysis in the planner', () => {
  it('holds the wave in Baking until its measurements succeeded, past the end of its bake', () => {
    const world = analysedCluster({ interval: '2m' });
    // The plan that completes the wave asks to be planned again at once: its first measurement is due.
    expect(bakeCanary(world).requeueAfterMs).toBe(0);
    for (let minute = 0; minute < 4; minute += 2) {
      const plan = measureAndPlan(world, () => value(0.001));
      expect(plan.status.phase).toBe('Baking');
      expect(plan.requeueAfterMs).toBeLessThanOrEqual(2 * MINUTE);
      later(world, 2 * MINUTE);
    }
    // The bake (2m) ended before the third measurement (at 4m): the wave still waits for it.
    const last = measureAndPlan(world, () => value(0.002));
    expect(last.status.waves[0]?.analysis).toMatchObject({
      phase: 'Successful',
      metrics: [{ name: 'error-rate', phase: 'Successful', count: 3, successful: 3, failed: 0, lastValue: '0.002' }],
    });
    later(world);
    expect(measureAndPlan(world, () => value(0)).status.waves.map((wave) => wave.phase)).toEqual([
      'Completed',
      'Progressing',
    ]);
  });

  it('halts with AnalysisFailed and the value in the message when a measurement fails beyond the limit; a resume measures again', () => {
    const world = analysedCluster();
    bakeCanary(world);
    expect(measureAndPlan(world, () => value(0.001)).status.phase).toBe('Baking');
    later(world, MINUTE);
    const halted = measureAndPlan(world, () => value(0.25));
    expect(halted.status.phase).toBe('Halted');
    expect(halted.status.halt).toMatchObject({ reason: 'AnalysisFailed', wave: 'canary' });
    expect(halted.status.halt?.message).toBe(
      'wave canary: analysis error-rate failed (1 of 2 measurement(s) failed, 0 error(s) in a row): ' +
        'result[0] < 0.01 did not hold for result 0.25',
    );
    expect(halted.status.waves[0]?.analysis?.metrics[0]).toMatchObject({
      phase: 'Failed',
      failed: 1,
      lastValue: '0.25',
    });
    expect(halted.actions.some((action) => action.kind === 'QuarantineRelease')).toBe(true);
    // Halted: nothing is measured; then the operator resumes and the analysis starts again.
    later(world, MINUTE);
    expect(measureAndPlan(world, () => value(0)).status.waves[0]?.analysis?.metrics[0]?.count).toBe(2);
    // Lift the quarantine the halt set, then resume.
    const release = world.releases.get('agent-1.4.2')!;
    world.releases.set(release.name, {
      ...release,
      spec: { ...(release.spec as object), quarantine: { quarantined: false } },
    });
    world.spec = { ...world.spec, resumeFromHalt: halted.status.halt?.id };
    const resumed = measureAndPlan(world, () => value(0));
    expect(resumed.status.phase).toBe('Baking');
    expect(resumed.status.waves[0]?.analysis).toMatchObject({ phase: 'Running', metrics: [{ count: 0, failed: 0 }] });
    expect(measureAndPlan(world, () => value(0)).status.waves[0]?.analysis?.metrics[0]).toMatchObject({ count: 1 });
  });

  it('counts measurements that cannot be taken as errors, and fails the analysis past consecutiveErrorLimit', () => {
    const world = analysedCluster({ consecutiveErrorLimit: 1 });
    bakeCanary(world);
    const down: QueryResult = { ok: false, code: 'E_NETWORK', message: 'the connection failed (ECONNREFUSED)' };
    expect(measureAndPlan(world, () => down).status.waves[0]?.analysis?.metrics[0]).toMatchObject({
      phase: 'Running',
      errors: 1,
      consecutiveErrors: 1,
    });
    later(world, MINUTE);
    const halted = measureAndPlan(world, () => down);
    expect(halted.status.halt).toMatchObject({ reason: 'AnalysisFailed', wave: 'canary' });
    expect(halted.status.waves[0]?.analysis?.metrics[0]).toMatchObject({ errors: 2, consecutiveErrors: 2, count: 2 });
  });

  it('records a measurement only once, and only the one the status expects next', () => {
    const world = analysedCluster();
    bakeCanary(world);
    const snapshot = world.snapshot();
    const stale: Measurement = {
      wave: 'canary',
      metric: 'error-rate',
      index: 5,
      atMs: world.nowMs,
      result: value(0.9),
    };
    const plan = planRollout({ ...snapshot, measurements: [stale] }, world.nowMs);
    expect(plan.status.waves[0]?.analysis).toMatchObject({ phase: 'Running', metrics: [{ count: 0, failed: 0 }] });
  });
});
