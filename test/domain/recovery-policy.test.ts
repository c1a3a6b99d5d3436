import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/common/digest.js';
import { InvariantViolation } from '../../src/domain/common/invariant.js';
import {
  COMPLETE_OUTCOME,
  failedOutcome,
  POLICY_FAILURES,
  recoverFailure,
} from '../../src/domain/node/recovery/policy-failures.js';
import { decideRecoverCommand } from '../../src/domain/node/recovery/recover-policy.js';
import { nextRollbackStep, rollbackAllowed, shouldQuarantine } from '../../src/domain/node/recovery/rollback-rules.js';
import { checkStartupDecision } from '../../src/domain/node/recovery/startup-invariants.js';
import { decideStartup } from '../../src/domain/node/recovery/startup-policy.js';
import {
  NO_PROGRESS,
  type RecoverDecision,
  type RecoverInput,
  type RunProgress,
  type StartupDecision,
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
import { withCompleted } from '../../src/domain/node/record/upgrade-record.js';
import type { TerminalStatus } from '../../src/ports/node/operation-store.js';

const SELF = '0123456789abcdef0123456789abcdef';
const OTHER = 'fedcba9876543210fedcba9876543210';
const DIGEST = 'd'.repeat(64) as Sha256;

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
const pending = created();
const chosen = withCandidate(pending, 'green', 'blue');
const installed = withCandidateDigest(chosen, DIGEST);
const switched = withSwitchCommitted(installed);
const EXEC: RecordedFailure = {
  reason: 'ExecutionFailed',
  code: 'E_DIGEST_MISMATCH',
  message: 'the archive digest does not match',
};
const DAEMON: RecordedFailure = POLICY_FAILURES.unhealthy;
const recovering = withFailure(switched, DAEMON, true);

const base: StartupObservation = {
  current: 'blue',
  lastGood: 'blue',
  self: 'blue',
  agent: 'blue',
  candidateHealth: 'unknown',
  container: 'unknown',
  quarantined: false,
  stateCommitted: false,
};

/** The candidate (green) is current and this self-hosted daemon runs it. */
const onCandidate: Partial<StartupObservation> = { current: 'green', self: 'green', agent: 'green' };
/** Rollback is complete: links on blue, nspawn copy verified equal, daemon/agent on blue. */
const rolledBack: Partial<StartupObservation> = {
  current: 'blue',
  lastGood: 'blue',
  self: 'blue',
  agent: 'blue',
  container: 'equal',
};

function start(
  record: UpgradeRecord | null,
  observed: Partial<StartupObservation> = {},
  progress: Partial<RunProgress> = {},
  mode: StartupInput['mode'] = 'self-hosted',
  instanceId = SELF,
): StartupInput {
  return { record, mode, instanceId, observed: { ...base, ...observed }, progress: { ...NO_PROGRESS, ...progress } };
}

function recoverIn(
  record: UpgradeRecord | null,
  observed: Partial<RecoverInput['observed']> = {},
  progress: Partial<RecoverInput['progress']> = {},
  message = '',
): RecoverInput {
  return {
    record,
    message,
    observed: { current: 'blue', lastGood: 'blue', container: 'unknown', ...observed },
    progress: { containerCopiedFrom: null, agentRestarted: false, ...progress },
  };
}

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

describe('decideRecoverCommand: docs/protocol.md#recovery-command-r1r3', () => {
  const rows: Array<[string, RecoverInput, Partial<RecoverDecision> & Record<string, unknown>]> = [
    [
      'no record: exit 0, nothing changes',
      recoverIn(null, { current: 'green', lastGood: 'blue' }),
      { kind: 'done', rule: 'R1', exitCode: 0 },
    ],
    [
      'record after the switch: record M + recoveryRequired',
      recoverIn(switched, { current: 'green' }, {}, 'agent crash loop'),
      {
        kind: 'record-failure',
        rule: 'R3',
        recoveryRequired: true,
        failure: { reason: 'DaemonFailed', code: 'E_SERVICE', message: 'agent crash loop' },
      },
    ],
    [
      'failure recorded, current still the candidate: roll back',
      recoverIn(recovering, { current: 'green' }),
      { kind: 'roll-back', rule: 'R3', to: 'blue' },
    ],
    [
      'links restored: nspawn ← last-good',
      recoverIn(recovering),
      { kind: 'restore-container', rule: 'R3', from: 'blue' },
    ],
    [
      'rolled back: reset-failed + restart the agent unit',
      recoverIn(recovering, {}, { containerCopiedFrom: 'blue' }),
      { kind: 'restart-agent', rule: 'R3' },
    ],
    [
      'restarted: exit 0; the next daemon runs S8',
      recoverIn(recovering, {}, { containerCopiedFrom: 'blue', agentRestarted: true }),
      { kind: 'done', rule: 'R3', exitCode: 0 },
    ],
    [
      'existing failure kept, recoveryRequired raised',
      recoverIn(withFailure(switched, EXEC, false), { current: 'green' }, {}, 'M'),
      { kind: 'record-failure', recoveryRequired: true, failure: EXEC },
    ],
    [
      'before the switch: failure recorded without recoveryRequired (no downgrade)',
      recoverIn(installed, { lastGood: 'green' }, {}, 'M'),
      { kind: 'record-failure', recoveryRequired: false },
    ],
    [
      'before the switch, failure recorded: no rollback, restart only',
      recoverIn(withFailure(installed, DAEMON, false), { lastGood: 'green' }),
      { kind: 'restart-agent' },
    ],
  ];

  it.each(rows)('%s', (_name, input, expected) => {
    expect(decideRecoverCommand(input)).toMatchObject(expected);
  });

  it('redacts URLs in the message and defaults an empty one', () => {
    const failure = recoverFailure('  fetch https://user:pw@example.test/a.tgz?sig=SECRET failed ');
    expect(failure.message).not.toContain('SECRET');
    expect(failure.message).not.toContain('pw@');
    expect(failure).toMatchObject({ reason: 'DaemonFailed', code: 'E_SERVICE' });
    expect(recoverFailure('   ')).toEqual(POLICY_FAILURES.recovered);
  });

  it('running it twice equals running it once (I11)', () => {
    // Second run: failure and flag already in the record, links already restored.
    const second = recoverIn(recovering);
    expect(decideRecoverCommand(second).kind).toBe('restore-container');
    expect(
      decideRecoverCommand({ ...second, progress: { containerCopiedFrom: 'blue', agentRestarted: false } }).kind,
    ).toBe('restart-agent');
  });
});

describe('rollbackAllowed: the never-downgrade rule', () => {
  it.each([
    ['no candidate', pending, 'blue', false],
    ['no candidate, recoveryRequired (foreign record)', withFailure(pending, DAEMON, true), 'blue', false],
    ['candidate, not switched, current ≠ candidate', installed, 'blue', false],
    ['candidate, current unresolvable', installed, null, false],
    ['candidate is current (crash between switch and flag)', installed, 'green', true],
    ['switchCommitted', switched, 'blue', true],
    ['recoveryRequired', withFailure(installed, DAEMON, true), 'blue', true],
  ] as const)('%s → %s', (_name, record, current, expected) => {
    expect(rollbackAllowed(record, current)).toBe(expected);
  });

  it('never rolls back a record without switchCommitted/recoveryRequired whose candidate is not current', () => {
    const records = [
      installed,
      withFailure(installed, EXEC, false),
      withFailure(installed, DAEMON, false),
      chosen,
      withFailure(chosen, EXEC, false),
    ];
    for (const record of records) {
      for (const current of ['blue', null] as const) {
        for (const lastGood of ['blue', 'green', null] as const) {
          for (const mode of ['self-hosted', 'sidecar'] as const) {
            const decision = decideStartup(
              start(record, { current, lastGood, self: 'blue', agent: 'blue', container: 'differs' }, {}, mode),
            );
            expect(['roll-back', 'restore-container']).not.toContain(decision.kind);
          }
          const recoverDecision = decideRecoverCommand(recoverIn(record, { current, lastGood, container: 'differs' }));
          expect(['roll-back', 'restore-container']).not.toContain(recoverDecision.kind);
        }
      }
    }
  });

  it('nextRollbackStep: host links first, then the nspawn copy, repeatable after a partial failure', () => {
    const observed = { current: 'green', lastGood: 'blue', container: 'unknown' } as const;
    expect(nextRollbackStep(recovering, observed, null)).toEqual({ kind: 'roll-back', to: 'blue' });
    expect(nextRollbackStep(recovering, { ...observed, current: 'blue' }, null)).toEqual({
      kind: 'restore-container',
      from: 'blue',
    });
    expect(nextRollbackStep(recovering, { ...observed, current: 'blue' }, 'blue')).toBeNull();
    expect(nextRollbackStep(recovering, { ...observed, current: 'blue', container: 'equal' }, null)).toBeNull();
    expect(
      nextRollbackStep(recovering, { ...observed, current: 'blue', container: 'not-applicable' }, null),
    ).toBeNull();
    expect(nextRollbackStep(installed, { ...observed, current: 'blue' }, null)).toBeNull();
  });
});

describe('decideStartup: branches', () => {
  it('retry after the host link was already restored still restores the nspawn copy', () => {
    // A previous process restored current → blue and died before copying nspawn.
    for (const mode of ['self-hosted', 'sidecar'] as const) {
      for (const container of ['unknown', 'differs'] as const) {
        const decision = decideStartup(
          start(recovering, { current: 'blue', lastGood: 'blue', self: 'green', agent: 'green', container }, {}, mode),
        );
        expect(decision).toEqual({ kind: 'restore-container', rule: 'S6', from: 'blue' });
      }
    }
    // The same holds when only switchCommitted (no recoveryRequired) is left to allow it.
    const execAfterSwitch = withFailure(switched, EXEC, false);
    expect(decideStartup(start(execAfterSwitch, { current: 'blue', container: 'differs' })).kind).toBe(
      'restore-container',
    );
  });

  it('publishes again after a crash (published=false) before deleting', () => {
    const done = { ...onCandidate, candidateHealth: 'healthy', container: 'equal', stateCommitted: true } as const;
    expect(decideStartup(start(withCompleted(switched), done, { published: false })).kind).toBe('publish');
    expect(decideStartup(start(withCompleted(switched), done, { published: true })).kind).toBe('delete-record');
    const failedDone = { ...rolledBack, quarantined: true };
    expect(decideStartup(start(recovering, failedDone, { published: false })).kind).toBe('publish');
    expect(decideStartup(start(recovering, failedDone, { published: true })).kind).toBe('delete-record');
  });

  it('never returns delete-record unless published', () => {
    const bad = start(recovering, { ...rolledBack, quarantined: true });
    expect(() => checkStartupDecision(bad, { kind: 'delete-record', rule: 'S8' })).toThrow(InvariantViolation);
  });

  describe('own-record guard', () => {
    it('ignores an undecided record written by this self-hosted daemon', () => {
      for (const record of [pending, installed, switched]) {
        const own = { ...record, instanceId: SELF };
        expect(decideStartup(start(own, onCandidate)).kind).toBe('ignore-own-record');
      }
    });
    it('does not ignore an own record once it has a failure', () => {
      const own = { ...recovering, instanceId: SELF };
      expect(decideStartup(start(own, onCandidate)).kind).toBe('roll-back');
    });
    it('does not apply in sidecar mode: the same daemon resumes after restarting the agent (row 8)', () => {
      const own = { ...switched, instanceId: SELF };
      expect(decideStartup(start(own, onCandidate, { restartedInto: 'green' }, 'sidecar')).kind).toBe('measure-health');
    });
  });

  describe('self-hosted vs sidecar', () => {
    it('self-hosted: a restarted daemon that is not the candidate fails S5 without measuring', () => {
      const decision = decideStartup(start(switched, { current: 'green', self: 'blue', candidateHealth: 'healthy' }));
      expect(decision).toMatchObject({
        kind: 'record-failure',
        rule: 'S5',
        recoveryRequired: true,
        failure: POLICY_FAILURES.candidateNotRunning,
      });
    });
    it('sidecar: agent still on the previous slot after a sidecar crash → restart it into the candidate once, then measure', () => {
      const observed = { current: 'green', agent: 'blue' } as const;
      expect(decideStartup(start(switched, observed, {}, 'sidecar'))).toEqual({
        kind: 'restart-agent',
        rule: 'S4',
        into: 'green',
      });
      expect(decideStartup(start(switched, observed, { restartedInto: 'green' }, 'sidecar'))).toEqual({
        kind: 'measure-health',
        rule: 'S4',
        slot: 'green',
      });
      // The agent already runs the candidate: measure directly.
      expect(decideStartup(start(switched, { current: 'green', agent: 'green' }, {}, 'sidecar')).kind).toBe(
        'measure-health',
      );
      // The sidecar ignores `self`.
      expect(decideStartup(start(switched, { current: 'green', agent: 'green', self: null }, {}, 'sidecar')).kind).toBe(
        'measure-health',
      );
    });
    it('sidecar: restarts the agent into last-good once, then proceeds to S8 whatever the agent does', () => {
      const observed = { ...rolledBack, agent: null };
      expect(decideStartup(start(recovering, observed, { restartedInto: 'green' }, 'sidecar')).kind).toBe(
        'restart-agent',
      );
      expect(decideStartup(start(recovering, observed, { restartedInto: 'blue' }, 'sidecar')).kind).toBe('quarantine');
    });
    it('self-hosted: S8 only once this daemon is last-good; the candidate process never publishes the failure', () => {
      expect(decideStartup(start(recovering, { ...rolledBack, self: 'green', quarantined: true })).kind).toBe(
        'restart-into-last-good',
      );
      expect(decideStartup(start(recovering, { ...rolledBack, self: null, quarantined: true })).kind).toBe(
        'restart-into-last-good',
      );
      expect(decideStartup(start(recovering, { ...rolledBack, self: 'blue', quarantined: true })).kind).toBe('publish');
    });
    it('container not applicable (no active machine): no sync, no restore', () => {
      expect(
        decideStartup(start(switched, { ...onCandidate, candidateHealth: 'healthy', container: 'not-applicable' }))
          .kind,
      ).toBe('commit-state');
      expect(decideStartup(start(recovering, { ...rolledBack, container: 'not-applicable' })).kind).toBe('quarantine');
    });
    it('nspawn already equal after a crash: no second copy', () => {
      expect(
        decideStartup(start(switched, { ...onCandidate, candidateHealth: 'healthy', container: 'equal' })).kind,
      ).toBe('commit-state');
    });
    it('nspawn differs before this process synced it: sync, not fail', () => {
      expect(
        decideStartup(start(switched, { ...onCandidate, candidateHealth: 'healthy', container: 'differs' })).kind,
      ).toBe('sync-container');
    });
  });

  describe('reasons', () => {
    it('publishes ExecutionFailed from the record (rows 5–7) with its message', () => {
      const decision = decideStartup(start(withFailure(chosen, EXEC, false)));
      expect(decision).toEqual({
        kind: 'publish',
        rule: 'S8',
        status: { phase: 'Failed', reason: 'ExecutionFailed', message: EXEC.message },
      });
    });
    it('records and publishes DaemonFailed for failures found at startup', () => {
      for (const input of [
        start(pending),
        start(installed),
        start(switched, { ...onCandidate, candidateHealth: 'unhealthy' }),
      ]) {
        const decision = decideStartup(input);
        expect(decision.kind).toBe('record-failure');
        if (decision.kind === 'record-failure') expect(decision.failure.reason).toBe('DaemonFailed');
      }
    });
    it('the published status is a TerminalStatus of the OperationStore port', () => {
      const decision = decideStartup(start(recovering, { ...rolledBack, quarantined: true }));
      expect(decision.kind).toBe('publish');
      if (decision.kind === 'publish') {
        const status: TerminalStatus = decision.status;
        expect(status.phase).toBe('Failed');
      }
    });
  });

  describe('quarantine', () => {
    it('only when a candidate digest exists', () => {
      const noDigest = withFailure(withSwitchCommitted(chosen), DAEMON, true);
      expect(shouldQuarantine(noDigest)).toBe(false);
      expect(decideStartup(start(noDigest, rolledBack)).kind).toBe('publish');
      expect(decideStartup(start(recovering, rolledBack))).toEqual({ kind: 'quarantine', rule: 'S8', digest: DIGEST });
    });
    it('not for a candidate that never ran (failure before the switch)', () => {
      const beforeSwitch = withFailure(installed, EXEC, false);
      expect(shouldQuarantine(beforeSwitch)).toBe(false);
      expect(decideStartup(start(beforeSwitch)).kind).toBe('publish');
    });
    it('once: an already quarantined digest is not added again', () => {
      expect(decideStartup(start(recovering, { ...rolledBack, quarantined: true })).kind).toBe('publish');
    });
  });

  describe('impossible inputs are invariant violations', () => {
    it('switchCommitted without a candidate', () => {
      const broken = { ...pending, switchCommitted: true };
      expect(() => decideStartup(start(broken))).toThrow(InvariantViolation);
      expect(() => decideRecoverCommand(recoverIn(broken))).toThrow(InvariantViolation);
    });
    it('candidate without previous, or equal to it', () => {
      expect(() => decideStartup(start({ ...pending, candidate: 'green' }))).toThrow(InvariantViolation);
      expect(() => decideStartup(start({ ...chosen, previous: 'green' }))).toThrow(InvariantViolation);
    });
  });
});
