import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/common/digest.js';
import { decideRecoverCommand } from '../../src/domain/node/recovery/recover-policy.js';
import { decideStartup } from '../../src/domain/node/recovery/startup-policy.js';
import type {
  AgentMode,
  CandidateHealth,
  ContainerVerdict,
  RecoverDecision,
  RecoverInput,
  StartupDecision,
  StartupInput,
} from '../../src/domain/node/recovery/recovery-vocabulary.js';
import { SLOT_NAMES, type SlotName } from '../../src/domain/node/layout/slot.js';
import {
  UPGRADE_RECORD_KIND,
  UPGRADE_RECORD_SCHEMA_VERSION,
  type RecordedFailure,
  type UpgradeRecord,
} from '../../src/domain/node/record/upgrade-record.js';
import { NO_RESTART_OBSERVATION } from '../../src/domain/node/recovery/watch-rules.js';

/**
 * Every combination of record shape × observation × progress, for both modes: the policy is
 * total (never throws for a valid input) and the global rules hold. The rules are restated here
 * independently of the policy's own `checkStartupDecision`.
 */

const SELF = '0123456789abcdef0123456789abcdef';
const OTHER = 'fedcba9876543210fedcba9876543210';
const DIGEST = 'e'.repeat(64) as Sha256;
const EXEC: RecordedFailure = { reason: 'ExecutionFailed', code: 'E_IO', message: 'install failed' };
const DAEMON: RecordedFailure = { reason: 'DaemonFailed', code: 'E_UNHEALTHY', message: 'unhealthy' };

const SLOTS_OR_NULL: ReadonlyArray<SlotName | null> = [...SLOT_NAMES, null];
const BOOLS = [false, true] as const;
const HEALTH: readonly CandidateHealth[] = ['healthy', 'unhealthy', 'unknown'];
const CONTAINER: readonly ContainerVerdict[] = ['equal', 'differs', 'not-applicable', 'unknown'];
const MODES: readonly AgentMode[] = ['self-hosted', 'sidecar'];

function allRecords(): Array<UpgradeRecord | null> {
  const records: Array<UpgradeRecord | null> = [null];
  const slotPairs: ReadonlyArray<readonly [SlotName, SlotName] | null> = [null, ['green', 'blue'], ['blue', 'green']];
  for (const pair of slotPairs) {
    for (const candidateDigest of pair === null ? [null] : [null, DIGEST]) {
      for (const switchCommitted of pair === null ? [false] : BOOLS) {
        for (const recoveryRequired of BOOLS) {
          for (const failure of [null, EXEC, DAEMON]) {
            for (const instanceId of [SELF, OTHER]) {
              for (const completed of failure === null && pair !== null ? BOOLS : [false]) {
                records.push({
                  kind: UPGRADE_RECORD_KIND,
                  schemaVersion: UPGRADE_RECORD_SCHEMA_VERSION,
                  operation: { name: 'upgrade-1', uid: null },
                  instanceId,
                  activeMachine: 'kube1',
                  candidate: pair?.[0] ?? null,
                  previous: pair?.[1] ?? null,
                  candidateDigest,
                  switchCommitted,
                  recoveryRequired,
                  failure,
                  completed,
                });
              }
            }
          }
        }
      }
    }
  }
  return records;
}

const ROLLBACK_KINDS = new Set(['roll-back', 'restore-container']);

function mayRollBack(record: UpgradeRecord, current: SlotName | null): boolean {
  return (
    record.candidate !== null && (record.switchCommitted || record.recoveryRequired || current === record.candidate)
  );
}

function assertStartupRules(input: StartupInput, d: StartupDecision): void {
  const { record, observed, progress } = input;
  const fail = (rule: string): never => {
    throw new Error(`${rule}: ${JSON.stringify({ input, decision: d })}`);
  };
  if ((record === null) !== (d.kind === 'open-gate')) fail('the gate opens exactly when no record exists');
  if (record === null) return;
  if (d.kind === 'delete-record' && !progress.published) fail('publish before delete');
  if (ROLLBACK_KINDS.has(d.kind) && !mayRollBack(record, observed.current)) fail('never downgrade');
  if (d.kind === 'roll-back' && d.to !== record.previous) fail('rollback target is previous / last-good');
  if (d.kind === 'restore-container' && observed.current !== d.from) fail('host link before nspawn copy');
  if (d.kind === 'record-completion') {
    const proven =
      record.failure === null &&
      observed.current === record.candidate &&
      observed.candidateHealth === 'healthy' &&
      (observed.container === 'equal' || observed.container === 'not-applicable') &&
      observed.stateCommitted &&
      (input.mode === 'sidecar' || observed.self === record.candidate);
    if (!proven) fail('Complete is decided only for the healthy, synced, committed candidate');
  }
  if (d.kind === 'publish') {
    if (d.status.phase === 'Complete') {
      // Complete is published only once it was recorded as the outcome (record-completion is
      // returned only for the proven candidate; checked below).
      if (!record.completed) fail('Complete only once recorded as the outcome');
    } else if (d.kind === 'publish' && record.completed) {
      fail('never Failed for a record whose outcome is Complete');
    } else {
      const failure = record.failure;
      if (failure === null) return fail('Failed only with a recorded failure');
      if (d.status.reason !== failure.reason || d.status.message !== failure.message)
        fail('the recorded reason is published');
    }
  }
  if (d.kind === 'quarantine' && (record.candidateDigest === null || d.digest !== record.candidateDigest))
    fail('quarantine the candidate digest only');
  if (d.kind === 'record-failure' && record.failure !== null && d.failure !== record.failure)
    fail('an existing failure is kept');
  if (
    d.kind === 'ignore-own-record' &&
    (input.mode !== 'self-hosted' || record.failure !== null || record.instanceId !== input.instanceId)
  )
    fail('own-record guard');
  if (d.kind === 'restart-agent' && input.mode !== 'sidecar') fail('only the sidecar restarts the agent unit');
  if ((d.kind === 'restart-into-last-good' || d.kind === 'wait') && input.mode !== 'self-hosted')
    fail('only a self-hosted daemon restarts itself');
}

/** The window's rows have their own tests (watch-window.test.ts); here none is open or configured. */
const NO_WINDOW = { watch: null, watchMs: 0 } as const;

describe('decideStartup: exhaustive', () => {
  it('is total and keeps the global rules for every combination', () => {
    let count = 0;
    const kinds = new Map<string, number>();
    for (const record of allRecords()) {
      for (const mode of MODES) {
        for (const current of SLOTS_OR_NULL) {
          for (const lastGood of SLOTS_OR_NULL) {
            for (const runner of SLOTS_OR_NULL) {
              for (const candidateHealth of HEALTH) {
                for (const container of CONTAINER) {
                  for (const quarantined of BOOLS) {
                    for (const stateCommitted of BOOLS) {
                      for (const published of BOOLS) {
                        for (const containerCopiedFrom of SLOTS_OR_NULL) {
                          for (const restartedInto of SLOTS_OR_NULL) {
                            const input: StartupInput = {
                              record,
                              mode,
                              instanceId: SELF,
                              observed: {
                                current,
                                lastGood,
                                candidateHealth,
                                container,
                                quarantined,
                                stateCommitted,
                                self: mode === 'self-hosted' ? runner : null,
                                agent: mode === 'sidecar' ? runner : null,
                                restarts: NO_RESTART_OBSERVATION,
                              },
                              progress: { published, containerCopiedFrom, restartedInto, watchReported: false },
                              ...NO_WINDOW,
                            };
                            const decision = decideStartup(input);
                            assertStartupRules(input, decision);
                            kinds.set(decision.kind, (kinds.get(decision.kind) ?? 0) + 1);
                            count += 1;
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
    expect(count).toBeGreaterThan(1_000_000);
    // Every decision kind is reachable.
    expect([...kinds.keys()].sort()).toEqual([
      'check-container',
      'commit-state',
      'delete-record',
      'ignore-own-record',
      'measure-health',
      'open-gate',
      'publish',
      'quarantine',
      'record-completion',
      'record-failure',
      'restart-agent',
      'restart-into-last-good',
      'restore-container',
      'roll-back',
      'sync-container',
      'wait',
    ]);
  });
});

describe('decideRecoverCommand: exhaustive', () => {
  it('is total, keeps an existing failure, restarts before done and never downgrades', () => {
    let count = 0;
    for (const record of allRecords()) {
      for (const current of SLOTS_OR_NULL) {
        for (const lastGood of SLOTS_OR_NULL) {
          for (const container of CONTAINER) {
            for (const containerCopiedFrom of SLOTS_OR_NULL) {
              for (const agentRestarted of BOOLS) {
                for (const message of ['', 'crash loop https://x.test/a?sig=SECRET']) {
                  const input: RecoverInput = {
                    record,
                    recordAtStart: record,
                    message,
                    observed: { current, lastGood, container },
                    progress: { containerCopiedFrom, agentRestarted },
                  };
                  const d: RecoverDecision = decideRecoverCommand(input);
                  count += 1;
                  if (record === null || record.completed) {
                    expect(d).toEqual({ kind: 'done', rule: 'R1', exitCode: 0 });
                    continue;
                  }
                  if (ROLLBACK_KINDS.has(d.kind)) expect(mayRollBack(record, current)).toBe(true);
                  if (d.kind === 'record-failure') {
                    expect(d.recoveryRequired).toBe(mayRollBack(record, current));
                    if (record.failure !== null) expect(d.failure).toBe(record.failure);
                    expect(d.failure.message).not.toContain('SECRET');
                  }
                  if (d.kind === 'done') expect(agentRestarted).toBe(true);
                  if (d.kind === 'restart-agent') expect(record.failure).not.toBeNull();
                }
              }
            }
          }
        }
      }
    }
    expect(count).toBeGreaterThan(10_000);
  });

  it('changes nothing when the open record was opened, or switched, after recover started (R1)', () => {
    let count = 0;
    for (const record of allRecords()) {
      if (record === null) continue;
      const unswitched = { ...record, switchCommitted: false };
      const starts = [null, { ...record, instanceId: 'a'.repeat(32) }, ...(record.switchCommitted ? [unswitched] : [])];
      for (const recordAtStart of starts) {
        for (const current of SLOTS_OR_NULL) {
          const observed = { current, lastGood: current, container: 'unknown' as const };
          const progress = { containerCopiedFrom: null, agentRestarted: false };
          const input: RecoverInput = { record, recordAtStart, message: '', observed, progress };
          expect(decideRecoverCommand(input)).toEqual({ kind: 'done', rule: 'R1', exitCode: 0 });
          count += 1;
        }
      }
    }
    expect(count).toBeGreaterThan(100);
  });
});
