import { describe, expect, it } from 'vitest';
import { InvariantViolation } from '../../src/domain/common/invariant.js';
import { POLICY_FAILURES } from '../../src/domain/node/recovery/policy-failures.js';
import { decideRecoverCommand } from '../../src/domain/node/recovery/recover-policy.js';
import { shouldQuarantine } from '../../src/domain/node/recovery/rollback-rules.js';
import { checkStartupDecision } from '../../src/domain/node/recovery/startup-invariants.js';
import { decideStartup } from '../../src/domain/node/recovery/startup-policy.js';
import { withCompleted, withFailure, withSwitchCommitted } from '../../src/domain/node/record/upgrade-record.js';
import type { TerminalStatus } from '../../src/ports/node/operation-store.js';
import {
  chosen,
  DAEMON,
  DIGEST,
  EXEC,
  installed,
  onCandidate,
  pending,
  recovering,
  recoverIn,
  rolledBack,
  SELF,
  start,
  switched,
} from './recovery-policy-fixtures.js';

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
