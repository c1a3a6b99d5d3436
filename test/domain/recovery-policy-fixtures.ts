/** Records along the managed path and the startup and recover inputs built from them. */
import type { Sha256 } from '../../src/domain/common/digest.js';
import { POLICY_FAILURES } from '../../src/domain/node/recovery/policy-failures.js';
import {
  NO_PROGRESS,
  type RecoverInput,
  type RunProgress,
  type StartupInput,
  type StartupObservation,
} from '../../src/domain/node/recovery/recovery-vocabulary.js';
import {
  newUpgradeRecord,
  withCandidate,
  withCandidateDigest,
  withFailure,
  withSwitchCommitted,
  type RecordedFailure,
  type UpgradeRecord,
} from '../../src/domain/node/record/upgrade-record.js';
import { NO_RESTART_OBSERVATION } from '../../src/domain/node/recovery/watch-rules.js';

export const SELF = '0123456789abcdef0123456789abcdef';
export const OTHER = 'fedcba9876543210fedcba9876543210';
export const DIGEST = 'd'.repeat(64) as Sha256;

function created(instanceId = OTHER): UpgradeRecord {
  const result = newUpgradeRecord({
    operationName: 'upgrade-node-1',
    operationUid: null,
    instanceId,
    activeMachine: 'kube1',
  });
  if (!result.ok) throw new Error(`test setup: ${result.failure.message}`);
  return result.value;
}

// The managed path's records, candidate green over previous blue.
export const pending = created();
export const chosen = withCandidate(pending, 'green', 'blue');
export const installed = withCandidateDigest(chosen, DIGEST);
export const switched = withSwitchCommitted(installed);
export const EXEC: RecordedFailure = {
  reason: 'ExecutionFailed',
  code: 'E_DIGEST_MISMATCH',
  message: 'the archive digest does not match',
};
export const DAEMON: RecordedFailure = POLICY_FAILURES.unhealthy;
export const recovering = withFailure(switched, DAEMON, true);

const base: StartupObservation = {
  current: 'blue',
  lastGood: 'blue',
  self: 'blue',
  agent: 'blue',
  candidateHealth: 'unknown',
  container: 'unknown',
  quarantined: false,
  stateCommitted: false,
  restarts: NO_RESTART_OBSERVATION,
};

/** The candidate (green) is current and this self-hosted daemon runs it. */
export const onCandidate: Partial<StartupObservation> = { current: 'green', self: 'green', agent: 'green' };
/** Rollback is complete: links on blue, nspawn copy verified equal, daemon/agent on blue. */
export const rolledBack: Partial<StartupObservation> = {
  current: 'blue',
  lastGood: 'blue',
  self: 'blue',
  agent: 'blue',
  container: 'equal',
};

export function start(
  record: UpgradeRecord | null,
  observed: Partial<StartupObservation> = {},
  progress: Partial<RunProgress> = {},
  mode: StartupInput['mode'] = 'self-hosted',
  instanceId = SELF,
): StartupInput {
  return {
    record,
    mode,
    instanceId,
    observed: { ...base, ...observed },
    progress: { ...NO_PROGRESS, ...progress },
    watch: null,
    watchMs: 0,
  };
}

export function recoverIn(
  record: UpgradeRecord | null,
  observed: Partial<RecoverInput['observed']> = {},
  progress: Partial<RecoverInput['progress']> = {},
  message = '',
): RecoverInput {
  return {
    record,
    recordAtStart: record,
    message,
    observed: { current: 'blue', lastGood: 'blue', container: 'unknown', ...observed },
    progress: { containerCopiedFrom: null, agentRestarted: false, ...progress },
  };
}
