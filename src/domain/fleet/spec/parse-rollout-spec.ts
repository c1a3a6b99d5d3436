import {
  DEFAULT_MAX_IN_FLIGHT,
  ROLLOUT_STATES,
  type AgentRolloutSpec,
  type RollbackSpec,
  type RolloutState,
} from './rollout-spec.js';
import { count, parseAmount } from './amount.js';
import { parseSchedule } from './parse-schedule.js';
import { parseTargetSelector } from './parse-selector.js';
import { parseStrategy } from './parse-strategy.js';
import {
  checkKnownFields,
  isObjectName,
  isRecord,
  objectField,
  ProblemList,
  stringField,
  type Json,
  type Parsed,
} from './spec-problems.js';
import { isOneOf } from '../../common/one-of.js';

const TOP_LEVEL_FIELDS = ['releaseRef', 'targets', 'state', 'resumeFromHalt', 'strategy', 'rollback', 'schedule'];

/** Parses an untrusted AgentRollout spec, with every problem reported and defaults applied. */
export function parseRolloutSpec(raw: unknown): Parsed<AgentRolloutSpec> {
  const problems = new ProblemList();
  if (!isRecord(raw)) {
    problems.add('E_FIELD_SHAPE', 'spec', 'must be an object');
    return problems.fail();
  }
  checkKnownFields(raw, TOP_LEVEL_FIELDS, 'spec', problems);
  const releaseRef = parseRef(raw, 'releaseRef', 'spec', problems);
  const targets = objectField(raw, 'targets', 'spec', problems);
  if (targets !== null) checkKnownFields(targets, ['selector'], 'spec.targets', problems);
  const selector = parseTargetSelector(targets?.['selector'], 'spec.targets.selector', problems);
  const state = raw['state'] ?? 'Preview';
  if (!isOneOf(ROLLOUT_STATES, state)) {
    problems.add('E_ROLLOUT_STATE', 'spec.state', `must be one of ${ROLLOUT_STATES.join(', ')}`);
  }
  const resumeFromHalt = stringField(raw, 'resumeFromHalt', 'spec', problems, 'E_FIELD_SHAPE') ?? '';
  const strategy = parseStrategy(raw, problems);
  const rollback = parseRollback(raw, problems);
  if (rollback === null && (strategy.onFailure !== 'Halt' || state === 'RollBack')) {
    problems.add('E_ROLLOUT_ROLLBACK', 'spec.rollback', 'is required when onFailure rolls back or state is RollBack');
  }
  if (rollback !== null && releaseRef !== null && rollback.releaseRef.name === releaseRef) {
    problems.add('E_ROLLOUT_ROLLBACK', 'spec.rollback.releaseRef', 'must name a release other than spec.releaseRef');
  }
  const schedule = parseSchedule(raw, problems);
  return problems.result({
    releaseRef: { name: releaseRef ?? '' },
    targets: { selector },
    state: state as RolloutState,
    resumeFromHalt,
    strategy,
    rollback,
    schedule,
  });
}

function parseRef(object: Json, key: string, path: string, problems: ProblemList): string | null {
  const ref = objectField(object, key, path, problems);
  const name = ref === null ? null : ref['name'];
  if (typeof name !== 'string' || !isObjectName(name)) {
    problems.add('E_ROLLOUT_RELEASE_REF', `${path}.${key}.name`, 'must name an AgentRelease');
    return null;
  }
  checkKnownFields(ref ?? {}, ['name'], `${path}.${key}`, problems);
  return name;
}

function parseRollback(spec: Json, problems: ProblemList): RollbackSpec | null {
  const rollback = objectField(spec, 'rollback', 'spec', problems);
  if (rollback === null) return null;
  const path = 'spec.rollback';
  checkKnownFields(rollback, ['releaseRef', 'maxInFlight', 'failureBudget'], path, problems);
  const releaseRef = parseRef(rollback, 'releaseRef', path, problems);
  return {
    releaseRef: { name: releaseRef ?? '' },
    maxInFlight: parseAmount(rollback['maxInFlight'], `${path}.maxInFlight`, DEFAULT_MAX_IN_FLIGHT, problems),
    failureBudget: parseAmount(rollback['failureBudget'], `${path}.failureBudget`, count(0), problems),
  };
}
