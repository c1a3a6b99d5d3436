import { evaluateCondition } from '../spec/analysis-condition.js';
import type { AgentRolloutSpec, AnalysisMetricSpec, WaveSpec } from '../spec/rollout-spec.js';
import type { PreviousStatus } from '../status/read-rollout-status.js';
import type {
  AnalysisPhase,
  AnalysisStatus,
  MetricStatus,
  RolloutPhase,
  WaveStatus,
} from '../status/rollout-status.js';
import { formatTimestamp, parseTimestamp } from '../spec/time-text.js';
import type { Measurement, QueryResult } from '../order/snapshot.js';
import { MESSAGE_MAX_LENGTH } from '../spec/rollout-vocabulary.js';
import type { HaltFinding } from './halt-rules.js';

/**
 * A wave's analysis: while the wave bakes, each metric's query is measured once when the bake
 * starts and then every `interval`, until `count` measurements were judged. A measurement whose
 * condition held is successful; one whose condition did not hold failed; one that could not be
 * taken or judged (the server unreachable, an error answer, a result without the element the
 * condition reads) is an error, and is taken again at the next interval. More failures than
 * `failureLimit`, or more errors in a row than `consecutiveErrorLimit`, fail the metric and the
 * analysis, which halts the rollout (AnalysisFailed). The wave is done baking only once its
 * analysis succeeded, however short its bake.
 *
 * The controller takes the measurements that are due (dueMeasurements) before it plans, and the
 * planner records them in the wave's status (runAnalyses): what is due and what was decided
 * follow from the status alone, so a restart measures and decides the same.
 */

export interface MeasurementRequest {
  readonly wave: string;
  readonly metric: string;
  readonly index: number;
  readonly address: string;
  readonly query: string;
}

/** Phases in which a baking wave's analysis runs: not while halted, paused, rolling back or over. */
const MEASURING: readonly RolloutPhase[] = ['Progressing', 'Baking', 'AwaitingApproval', 'WaitingForWindow'];
const VALUES_SHOWN = 5;

/** The measurements due at `nowMs`, one per metric at most. */
export function dueMeasurements(spec: AgentRolloutSpec, previous: PreviousStatus, nowMs: number): MeasurementRequest[] {
  if (spec.state !== 'Run' || previous.phase === null || !MEASURING.includes(previous.phase)) return [];
  return spec.strategy.waves.flatMap((wave) => {
    const status = previous.waves.find((entry) => entry.name === wave.name);
    const start = analysisStart(wave, status);
    if (start === null || wave.analysis === null) return [];
    return wave.analysis.metrics.flatMap((metric) => {
      const recorded = status?.analysis?.metrics.find((entry) => entry.name === metric.name);
      if (recorded !== undefined && recorded.phase !== 'Running') return [];
      const index = recorded?.count ?? 0;
      if (start.atMs + index * metric.intervalMs > nowMs) return [];
      return [{ wave: wave.name, metric: metric.name, index, address: metric.address, query: metric.query }];
    });
  });
}

/** When a baking wave's running analysis started; `null` when it does not run now. */
function analysisStart(wave: WaveSpec, status: WaveStatus | undefined): { atMs: number } | null {
  if (wave.analysis === null || status?.completedAt === undefined || status.phase === 'Completed') return null;
  if (status.analysis !== undefined && status.analysis.phase !== 'Running') return null;
  const atMs = parseTimestamp(status.analysis?.startedAt ?? status.completedAt);
  return atMs === null ? null : { atMs };
}

/**
 * Every baking wave's analysis, with this plan's measurements recorded. `restartFailed`: a halt
 * is resumed in this plan, so a failed analysis starts again from now.
 */
export function runAnalyses(
  waves: readonly WaveSpec[],
  previous: readonly WaveStatus[],
  measurements: readonly Measurement[],
  restartFailed: boolean,
  nowMs: number,
): Map<string, AnalysisStatus> {
  const analyses = new Map<string, AnalysisStatus>();
  for (const wave of waves) {
    const status = previous.find((entry) => entry.name === wave.name);
    if (wave.analysis === null || status?.completedAt === undefined || status.phase === 'Completed') continue;
    let analysis = status.analysis ?? fresh(status.completedAt);
    if (restartFailed && analysis.phase === 'Failed') analysis = fresh(formatTimestamp(nowMs));
    if (analysis.phase !== 'Running') {
      analyses.set(wave.name, analysis);
      continue;
    }
    const mine = measurements.filter((measurement) => measurement.wave === wave.name);
    const metrics = wave.analysis.metrics.map((spec) =>
      recordAll(spec, analysis.metrics.find((entry) => entry.name === spec.name) ?? zero(spec.name), mine),
    );
    analyses.set(wave.name, {
      phase: overall(metrics.map((metric) => metric.phase)),
      startedAt: analysis.startedAt,
      metrics,
    });
  }
  return analyses;
}

/**
 * The next instant a baking wave's analysis has a measurement due, read from the status a plan
 * writes: a wave that completes in this very plan is measured at once.
 */
export function nextMeasurementAtMs(waves: readonly WaveSpec[], statuses: readonly WaveStatus[]): number | null {
  let at = Number.POSITIVE_INFINITY;
  for (const wave of waves) {
    const status = statuses.find((entry) => entry.name === wave.name);
    const start = analysisStart(wave, status);
    if (start === null) continue;
    for (const spec of wave.analysis?.metrics ?? []) {
      const recorded = status?.analysis?.metrics.find((entry) => entry.name === spec.name);
      if (recorded === undefined || recorded.phase === 'Running')
        at = Math.min(at, start.atMs + (recorded?.count ?? 0) * spec.intervalMs);
    }
  }
  return Number.isFinite(at) ? at : null;
}

/** The first failed analysis, as what halts the rollout; its message carries the query's value. */
export function analysisHalt(
  waves: readonly WaveSpec[],
  analyses: ReadonlyMap<string, AnalysisStatus>,
): HaltFinding | null {
  for (const wave of waves) {
    const failed = analyses.get(wave.name)?.metrics.find((metric) => metric.phase === 'Failed');
    if (failed === undefined) continue;
    const judged = failed.successful + failed.failed;
    return {
      reason: 'AnalysisFailed',
      wave: wave.name,
      message: clip(
        `wave ${wave.name}: analysis ${failed.name} failed (${failed.failed} of ${judged} measurement(s) failed, ` +
          `${failed.consecutiveErrors} error(s) in a row): ${failed.message ?? ''}`,
      ),
    };
  }
  return null;
}

function fresh(startedAt: string): AnalysisStatus {
  return { phase: 'Running', startedAt, metrics: [] };
}

function zero(name: string): MetricStatus {
  return { name, phase: 'Running', count: 0, successful: 0, failed: 0, errors: 0, consecutiveErrors: 0 };
}

/** Records the metric's next measurements, in order; one for another index (a repeat, a stale one) is ignored. */
function recordAll(spec: AnalysisMetricSpec, before: MetricStatus, measurements: readonly Measurement[]): MetricStatus {
  let metric = before;
  const own = measurements.filter((entry) => entry.metric === spec.name).sort((a, b) => a.index - b.index);
  for (const measurement of own) {
    if (metric.phase !== 'Running' || measurement.index !== metric.count) continue;
    metric = record(spec, metric, measurement);
  }
  return metric;
}

function record(spec: AnalysisMetricSpec, metric: MetricStatus, measurement: Measurement): MetricStatus {
  const judged = judge(spec, measurement.result);
  const successful = metric.successful + (judged.outcome === 'successful' ? 1 : 0);
  const failed = metric.failed + (judged.outcome === 'failed' ? 1 : 0);
  const consecutiveErrors = judged.outcome === 'error' ? metric.consecutiveErrors + 1 : 0;
  const phase: AnalysisPhase =
    failed > spec.failureLimit || consecutiveErrors > spec.consecutiveErrorLimit
      ? 'Failed'
      : successful + failed >= spec.count
        ? 'Successful'
        : 'Running';
  return {
    name: metric.name,
    phase,
    count: metric.count + 1,
    successful,
    failed,
    errors: metric.errors + (judged.outcome === 'error' ? 1 : 0),
    consecutiveErrors,
    lastAt: formatTimestamp(measurement.atMs),
    ...(judged.value !== undefined && { lastValue: judged.value }),
    ...(judged.message !== undefined && { message: clip(judged.message) }),
  };
}

interface Judged {
  readonly outcome: 'successful' | 'failed' | 'error';
  readonly value?: string;
  readonly message?: string;
}

function judge(spec: AnalysisMetricSpec, result: QueryResult): Judged {
  if (!result.ok) return { outcome: 'error', message: `${result.code}: ${result.message}` };
  const value = showValues(result.values);
  const verdict = evaluateCondition(spec.condition, result.values);
  if (!verdict.ok)
    return { outcome: 'error', value, message: `${spec.successCondition} cannot be judged: ${verdict.why}` };
  if (verdict.holds) return { outcome: 'successful', value };
  return { outcome: 'failed', value, message: `${spec.successCondition} did not hold for result ${value}` };
}

/** `0.042`, or `[0.1, 0.2, …]` for several series. */
function showValues(values: readonly number[]): string {
  const shown = values.slice(0, VALUES_SHOWN).map((value) => String(value));
  if (values.length === 1) return shown[0] as string;
  return `[${shown.join(', ')}${values.length > VALUES_SHOWN ? ', …' : ''}]`;
}

function overall(phases: readonly AnalysisPhase[]): AnalysisPhase {
  if (phases.includes('Failed')) return 'Failed';
  return phases.every((phase) => phase === 'Successful') ? 'Successful' : 'Running';
}

function clip(text: string): string {
  return text.length <= MESSAGE_MAX_LENGTH ? text : `${text.slice(0, MESSAGE_MAX_LENGTH - 1)}…`;
}
