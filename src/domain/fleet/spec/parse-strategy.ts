import { count, parseAmount, percent, type Amount } from './amount.js';
import {
  DEFAULT_MAX_IN_FLIGHT,
  DEFAULT_NODE_READY_TIMEOUT_MS,
  DEFAULT_OPERATION_TIMEOUT_MS,
  MAX_WAVES,
  ON_FAILURE,
  type NodeReadinessSpec,
  type RolloutStrategy,
  type WaveSpec,
} from './rollout-spec.js';
import {
  booleanField,
  checkKnownFields,
  isDnsLabel,
  isRecord,
  objectField,
  ProblemList,
  stringField,
  type Json,
} from './spec-problems.js';
import { parseDuration } from './time-text.js';
import { parseAnalysis } from './parse-analysis.js';
import { ROLLBACK_WAVE } from './rollout-vocabulary.js';
import { isOneOf } from '../../common/one-of.js';

const WAVE_FIELDS = ['name', 'count', 'percent', 'maxInFlight', 'failureBudget', 'bake', 'gate', 'analysis'];

/** `spec.strategy`: the waves and the rules that stop them. */
export function parseStrategy(spec: Json, problems: ProblemList): RolloutStrategy {
  const strategy = objectField(spec, 'strategy', 'spec', problems) ?? {};
  const path = 'spec.strategy';
  checkKnownFields(
    strategy,
    ['waves', 'maxUnavailable', 'operationTimeout', 'onFailure', 'quarantineOnHalt', 'nodeReadiness', 'analysis'],
    path,
    problems,
  );
  const analysis = parseAnalysis(strategy, path, problems);
  // A wave without an analysis of its own runs the rollout's.
  const waves = parseWaves(strategy['waves'], problems).map((wave) => ({
    ...wave,
    analysis: wave.analysis ?? analysis,
  }));
  const maxUnavailable =
    strategy['maxUnavailable'] === undefined
      ? null
      : parseAmount(strategy['maxUnavailable'], `${path}.maxUnavailable`, count(1), problems);
  const timeout = durationField(strategy, 'operationTimeout', path, problems) ?? DEFAULT_OPERATION_TIMEOUT_MS;
  if (timeout === 0) problems.add('E_ROLLOUT_DURATION', `${path}.operationTimeout`, 'must be longer than 0');
  const onFailure = strategy['onFailure'] ?? 'Halt';
  if (!isOneOf(ON_FAILURE, onFailure)) {
    problems.add('E_ROLLOUT_ON_FAILURE', `${path}.onFailure`, `must be one of ${ON_FAILURE.join(', ')}`);
  }
  return {
    waves,
    maxUnavailable,
    operationTimeoutMs: timeout,
    onFailure: isOneOf(ON_FAILURE, onFailure) ? onFailure : 'Halt',
    quarantineOnHalt: booleanField(strategy, 'quarantineOnHalt', path, problems) ?? true,
    analysis,
    nodeReadiness: parseNodeReadiness(strategy, path, problems),
  };
}

/** `spec.strategy.nodeReadiness`: on unless turned off; the timeout must leave the Node some time. */
function parseNodeReadiness(strategy: Json, path: string, problems: ProblemList): NodeReadinessSpec {
  const gate = objectField(strategy, 'nodeReadiness', path, problems) ?? {};
  const at = `${path}.nodeReadiness`;
  checkKnownFields(gate, ['enabled', 'timeout'], at, problems);
  const timeoutMs = durationField(gate, 'timeout', at, problems) ?? DEFAULT_NODE_READY_TIMEOUT_MS;
  if (timeoutMs === 0) problems.add('E_ROLLOUT_DURATION', `${at}.timeout`, 'must be longer than 0');
  return { enabled: booleanField(gate, 'enabled', at, problems) ?? true, timeoutMs };
}

export function durationField(object: Json, key: string, path: string, problems: ProblemList): number | null {
  const text = stringField(object, key, path, problems, 'E_ROLLOUT_DURATION');
  if (text === null) return null;
  const ms = parseDuration(text);
  if (ms === null) problems.add('E_ROLLOUT_DURATION', `${path}.${key}`, 'must be a duration such as "90s" or "1h30m"');
  return ms;
}

function parseWaves(raw: unknown, problems: ProblemList): WaveSpec[] {
  const path = 'spec.strategy.waves';
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > MAX_WAVES) {
    problems.add('E_ROLLOUT_WAVES', path, `must list 1 to ${MAX_WAVES} waves`);
    return [];
  }
  const waves = raw.flatMap((entry: unknown, index) => parseWave(entry, index, `${path}[${index}]`, problems));
  checkWaveSequence(waves, problems);
  return waves;
}

function parseWave(raw: unknown, index: number, path: string, problems: ProblemList): WaveSpec[] {
  if (!isRecord(raw)) {
    problems.add('E_ROLLOUT_WAVES', path, 'must be an object');
    return [];
  }
  checkKnownFields(raw, WAVE_FIELDS, path, problems);
  const name = raw['name'];
  if (typeof name !== 'string' || !isDnsLabel(name) || name === ROLLBACK_WAVE) {
    problems.add(
      'E_ROLLOUT_WAVE_NAME',
      `${path}.name`,
      `must be a DNS label (a-z, 0-9, -; at most 63) other than "${ROLLBACK_WAVE}"`,
    );
  }
  const size = parseWaveSize(raw, path, problems);
  const gate = raw['gate'] ?? 'Auto';
  if (gate !== 'Auto' && gate !== 'Manual') problems.add('E_ROLLOUT_GATE', `${path}.gate`, 'must be Auto or Manual');
  const defaultBudget = size.kind === 'count' ? count(0) : percent(1);
  return [
    {
      name: typeof name === 'string' ? name : `wave-${index}`,
      size,
      maxInFlight: parseAmount(raw['maxInFlight'], `${path}.maxInFlight`, DEFAULT_MAX_IN_FLIGHT, problems),
      failureBudget: parseAmount(raw['failureBudget'], `${path}.failureBudget`, defaultBudget, problems),
      bakeMs: durationField(raw, 'bake', path, problems) ?? 0,
      gate: gate === 'Manual' ? 'Manual' : 'Auto',
      diverse: size.kind === 'count' || index === 0,
      analysis: parseAnalysis(raw, path, problems),
    },
  ];
}

function parseWaveSize(raw: Json, path: string, problems: ProblemList): Amount {
  const hasCount = raw['count'] !== undefined;
  const hasPercent = raw['percent'] !== undefined;
  if (hasCount === hasPercent) {
    problems.add('E_ROLLOUT_WAVE_SIZE', path, 'must have exactly one of count and percent');
    return percent(100);
  }
  const value = hasCount ? raw['count'] : raw['percent'];
  const max = hasCount ? 1_000_000 : 100;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    problems.add(
      'E_ROLLOUT_WAVE_SIZE',
      `${path}.${hasCount ? 'count' : 'percent'}`,
      `must be an integer from 1 to ${max}`,
    );
    return percent(100);
  }
  return hasCount ? count(value) : percent(value);
}

/** Names unique; counts and percentages each increasing (they are cumulative); the last wave 100%. */
function checkWaveSequence(waves: readonly WaveSpec[], problems: ProblemList): void {
  const seen = new Set<string>();
  let lastCount = 0;
  let lastPercent = 0;
  waves.forEach((wave, index) => {
    const path = `spec.strategy.waves[${index}]`;
    if (seen.has(wave.name)) problems.add('E_ROLLOUT_WAVE_NAME', `${path}.name`, `"${wave.name}" is used twice`);
    seen.add(wave.name);
    const previous = wave.size.kind === 'count' ? lastCount : lastPercent;
    if (wave.size.value <= previous) {
      problems.add('E_ROLLOUT_WAVE_SIZE', path, `sizes are cumulative: ${wave.size.kind} must grow from wave to wave`);
    }
    if (wave.size.kind === 'count') lastCount = wave.size.value;
    else lastPercent = wave.size.value;
  });
  const last = waves[waves.length - 1];
  if (last !== undefined && !(last.size.kind === 'percent' && last.size.value === 100)) {
    problems.add(
      'E_ROLLOUT_WAVE_SIZE',
      `spec.strategy.waves[${waves.length - 1}]`,
      'the last wave must be percent: 100',
    );
  }
}
