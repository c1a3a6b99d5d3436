import { describe, expect, it } from 'vitest';
import { COMPLETE_OUTCOME, failedOutcome, POLICY_FAILURES } from '../../src/domain/node/recovery/policy-failures.js';
import { decideStartup } from '../../src/domain/node/recovery/startup-policy.js';
import type { StartupDecision, StartupInput } from '../../src/domain/node/recovery/recovery-vocabulary.js';
import { withCompleted, withFailure } from '../../src/domain/node/record/upgrade-record.js';
import {
  DAEMON,
  DIGEST,
  EXEC,
  installed,
  onCandidate,
  OTHER,
  pending,
  recovering,
  rolledBack,
  start,
  switched,
} from './recovery-policy-fixtures.js';

describe('decideStartup: docs/protocol.md#startup-gate-s1s8', () => {
  const rows: Array<[string, StartupInput, Partial<StartupDecision> & Record<string, unknown>]> = [
    ['S1 no record: open the gate', start(null), { kind: 'open-gate', rule: 'S1' }],
    [
      'S2 no failure, no candidate: interrupted before a slot was chosen',
      start(pending),
      {
        kind: 'record-failure',
        rule: 'S2',
        recoveryRequired: false,
        failure: expect.objectContaining({ reason: 'DaemonFailed', code: 'E_SERVICE' }),
      },
    ],
    [
      'S3 no failure, candidate set, current ≠ candidate: interrupted before the switch',
      start(installed),
      { kind: 'record-failure', rule: 'S3', recoveryRequired: false, failure: POLICY_FAILURES.interruptedBeforeSwitch },
    ],
    [
      'S3 with switchCommitted but current no longer the candidate',
      start(switched),
      { kind: 'record-failure', rule: 'S3', recoveryRequired: false, failure: POLICY_FAILURES.switchUndone },
    ],
    [
      'S3 current unresolvable counts as ≠ candidate',
      start(installed, { current: null }),
      { kind: 'record-failure', rule: 'S3', recoveryRequired: false },
    ],
    ['S4 health not measured yet', start(switched, onCandidate), { kind: 'measure-health', rule: 'S4', slot: 'green' }],
    [
      'S4 healthy: sync nspawn ← current',
      start(switched, { ...onCandidate, candidateHealth: 'healthy' }),
      { kind: 'sync-container', rule: 'S4', from: 'green' },
    ],
    [
      'S4 healthy, synced: check the digests',
      start(switched, { ...onCandidate, candidateHealth: 'healthy' }, { containerCopiedFrom: 'green' }),
      { kind: 'check-container', rule: 'S4', slot: 'green' },
    ],
    [
      'S4 healthy, nspawn equal: commit the state',
      start(switched, { ...onCandidate, candidateHealth: 'healthy', container: 'equal' }),
      { kind: 'commit-state', rule: 'S4', slot: 'green', digest: DIGEST },
    ],
    [
      'S4 committed: record Complete as the outcome',
      start(switched, { ...onCandidate, candidateHealth: 'healthy', container: 'equal', stateCommitted: true }),
      { kind: 'record-completion', rule: 'S4' },
    ],
    [
      'S4 completed: publish Complete',
      start(withCompleted(switched), onCandidate),
      { kind: 'publish', rule: 'S4', status: COMPLETE_OUTCOME },
    ],
    [
      'S4 completed and published: delete the record',
      start(withCompleted(switched), onCandidate, { published: true }),
      { kind: 'delete-record', rule: 'S4' },
    ],
    [
      'S4 completed, then the candidate looks unhealthy: Complete again, never Failed after Complete',
      start(withCompleted(switched), { ...onCandidate, candidateHealth: 'unhealthy', current: 'blue' }),
      { kind: 'publish', rule: 'S4', status: COMPLETE_OUTCOME },
    ],
    [
      'S5 not healthy within the timeout',
      start(switched, { ...onCandidate, candidateHealth: 'unhealthy' }),
      {
        kind: 'record-failure',
        rule: 'S5',
        recoveryRequired: true,
        failure: expect.objectContaining({ reason: 'DaemonFailed', code: 'E_UNHEALTHY' }),
      },
    ],
    [
      'S5 nspawn still differs after the sync',
      start(
        switched,
        { ...onCandidate, candidateHealth: 'healthy', container: 'differs' },
        { containerCopiedFrom: 'green' },
      ),
      {
        kind: 'record-failure',
        rule: 'S5',
        recoveryRequired: true,
        failure: expect.objectContaining({ code: 'E_DIGEST_MISMATCH' }),
      },
    ],
    [
      'S5 crash after the switch before switchCommitted, candidate unhealthy',
      start(installed, { ...onCandidate, candidateHealth: 'unhealthy' }),
      { kind: 'record-failure', rule: 'S5', recoveryRequired: true },
    ],
    [
      'S6 recovery required, current still the candidate: roll back',
      start(recovering, onCandidate),
      { kind: 'roll-back', rule: 'S6', to: 'blue' },
    ],
    [
      'S6 current restored but last-good points at the candidate: roll back again',
      start(recovering, { lastGood: 'green', self: 'green' }),
      { kind: 'roll-back', rule: 'S6', to: 'blue' },
    ],
    [
      'S6 host links restored: nspawn ← last-good',
      start(recovering, { self: 'green' }),
      { kind: 'restore-container', rule: 'S6', from: 'blue' },
    ],
    [
      'S6 failure without recoveryRequired while the candidate is current: raise it, keep the failure',
      start(withFailure(switched, EXEC, false), onCandidate),
      { kind: 'record-failure', rule: 'S6', recoveryRequired: true, failure: EXEC },
    ],
    [
      'S7 self-hosted, self ≠ last-good: schedule the restart into last-good',
      start(recovering, { ...rolledBack, self: 'green' }),
      { kind: 'restart-into-last-good', rule: 'S7', slot: 'blue' },
    ],
    [
      'S7 self-hosted, restart already scheduled: wait with the gate closed',
      start(recovering, { ...rolledBack, self: 'green' }, { restartedInto: 'blue' }),
      { kind: 'wait', rule: 'S7' },
    ],
    [
      'S7 sidecar, agent ≠ last-good: restart the agent unit',
      start(recovering, { ...rolledBack, agent: 'green' }, {}, 'sidecar'),
      { kind: 'restart-agent', rule: 'S7', into: 'blue' },
    ],
    [
      'S8 last-good runs: quarantine the failed candidate',
      start(recovering, rolledBack),
      { kind: 'quarantine', rule: 'S8', digest: DIGEST },
    ],
    [
      'S8 quarantined: publish Failed with the recorded reason',
      start(recovering, { ...rolledBack, quarantined: true }),
      { kind: 'publish', rule: 'S8', status: failedOutcome(DAEMON) },
    ],
    [
      'S8 published: delete the record',
      start(recovering, { ...rolledBack, quarantined: true }, { published: true }),
      { kind: 'delete-record', rule: 'S8' },
    ],
    [
      'S8 recovery not required (failure before the switch): publish, binaries untouched',
      start(withFailure(installed, EXEC, false)),
      { kind: 'publish', rule: 'S8', status: failedOutcome(EXEC) },
    ],
    [
      'own record of this self-hosted daemon: leave it',
      start(switched, onCandidate, {}, 'self-hosted', OTHER),
      { kind: 'ignore-own-record' },
    ],
  ];

  it.each(rows)('%s', (_name, input, expected) => {
    expect(decideStartup(input)).toMatchObject(expected);
  });
});
