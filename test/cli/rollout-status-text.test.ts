/**
 * `rollout status NAME` as text on a halted rollout whose wave analysis failed: the next steps
 * (a quarantined release is lifted before a resume), failures by reason and label, the last
 * failure, and each metric's verdict. Golden files (UPDATE_GOLDEN=1 rewrites them).
 */
import { describe, expect, it } from 'vitest';
import { MemoryRolloutStore } from '../../src/adapters/fleet/memory/memory-rollout-store.js';
import { expectGolden } from '../support/golden.js';
import { runCliInMemory } from '../support/run-cli.js';
import { HALTED_STATUS, NAME, putRollout } from './rollout-cli-fixtures.js';

const ANALYSIS = {
  phase: 'Failed',
  startedAt: '2025-03-03T08:30:00Z',
  metrics: [
    {
      name: 'error-rate',
      phase: 'Failed',
      count: 3,
      successful: 1,
      failed: 2,
      errors: 0,
      consecutiveErrors: 0,
      lastAt: '2025-03-03T08:41:00Z',
      lastValue: '0.31',
      message: 'result[0] < 0.05 did not hold',
    },
  ],
};

const FAILED_ANALYSIS_STATUS = {
  ...HALTED_STATUS,
  waves: HALTED_STATUS.waves.map((wave) => (wave.name === 'early' ? { ...wave, analysis: ANALYSIS } : wave)),
  failures: {
    sample: [
      {
        machine: 'node-017',
        operation: 'agent-upgrade-node-017-7f3a',
        wave: 'early',
        reason: 'DaemonFailed',
        message: 'rolled back: E_UNHEALTHY',
        at: '2025-03-03T08:41:30Z',
      },
    ],
    byReason: { DaemonFailed: 1 },
    byLabel: { 'kubernetes.io/arch=arm64': 1 },
  },
  halt: { ...HALTED_STATUS.halt, reason: 'AnalysisFailed', message: 'error-rate: 0.31' },
};

async function statusText(status: unknown, quarantine: 'Applied' | 'Skipped'): Promise<string> {
  const store = new MemoryRolloutStore();
  const halted = status as { halt: Record<string, unknown> };
  putRollout(store, { state: 'Run' }, { ...halted, halt: { ...halted.halt, quarantine } });
  const run = await runCliInMemory(['rollout', 'status', NAME], { rolloutStore: store });
  expect(run.exitCode).toBe(0);
  return run.stdout;
}

describe('rollout status as text', () => {
  it('a halt that quarantined the release: lift the quarantine, then resume', async () => {
    expectGolden('rollout-status-halted-quarantined.txt', await statusText(FAILED_ANALYSIS_STATUS, 'Applied'));
  });

  it('a halt that left the release alone: resume', async () => {
    const text = await statusText(FAILED_ANALYSIS_STATUS, 'Skipped');
    expectGolden('rollout-status-halted.txt', text);
  });
});
