import { describe, expect, it } from 'vitest';
import { POLICY_FAILURES, recoverFailure } from '../../src/domain/node/recovery/policy-failures.js';
import { decideRecoverCommand } from '../../src/domain/node/recovery/recover-policy.js';
import { nextRollbackStep, rollbackAllowed } from '../../src/domain/node/recovery/rollback-rules.js';
import { decideStartup } from '../../src/domain/node/recovery/startup-policy.js';
import type { RecoverDecision, RecoverInput } from '../../src/domain/node/recovery/recovery-vocabulary.js';
import { withFailure } from '../../src/domain/node/record/upgrade-record.js';
import {
  chosen,
  DAEMON,
  EXEC,
  installed,
  pending,
  recovering,
  recoverIn,
  start,
  switched,
} from './recovery-policy-fixtures.js';

describe('decideRecoverCommand: docs/protocol.md#recovery-command-r1r3', () => {
  const rows: Array<[string, RecoverInput, Partial<RecoverDecision> & Record<string, unknown>]> = [
    [
      'no record: exit 0, nothing changes',
      recoverIn(null, { current: 'green', lastGood: 'blue' }),
      { kind: 'done', rule: 'R1', exitCode: 0 },
    ],
    [
      'another record opened while recover waited for the lock: exit 0, nothing changes',
      { ...recoverIn(switched, { current: 'green' }), recordAtStart: { ...switched, instanceId: 'f'.repeat(32) } },
      { kind: 'done', rule: 'R1', exitCode: 0 },
    ],
    [
      'the switch committed while recover waited for the lock: exit 0, nothing changes',
      { ...recoverIn(switched, { current: 'green' }), recordAtStart: { ...switched, switchCommitted: false } },
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
