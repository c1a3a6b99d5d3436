/** The rollout and the helpers the `agent-upgrade rollout …` CLI tests share. */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { load } from 'js-yaml';
import type { MemoryRolloutStore } from '../../src/adapters/fleet/memory/memory-rollout-store.js';
import { runCliInMemory } from '../support/run-cli.js';

export const EXAMPLE = load(
  readFileSync(resolve(import.meta.dirname, '../../deploy/examples/agent-rollout.yaml'), 'utf8'),
) as {
  metadata: { name: string };
  spec: Record<string, unknown>;
};
export const NAME = EXAMPLE.metadata.name;
export const HALT_ID = 'early-e67b10ca';

const wave = (name: string, phase: string, size: number, cursor: number, used = 0, allowed = 0) => ({
  name,
  phase,
  size,
  cursor,
  pendingCreates: [],
  failureBudget: { allowed, used },
});
export const HALTED_STATUS = {
  observedGeneration: 2,
  phase: 'Halted',
  progress: '15/400',
  currentWave: 'early',
  counts: {
    targets: 400,
    excluded: { optedOut: 0, alreadyAtTarget: 0, conflict: 0, vanished: 0, noArtifact: 0 },
    pending: 384,
    inFlight: 0,
    succeeded: 15,
    failed: 1,
    timedOut: 0,
    lost: 0,
    rolledBack: 0,
  },
  waves: [wave('canary', 'Completed', 4, 4), wave('early', 'Halted', 36, 12, 1, 0)],
  failures: { sample: [], byReason: { DaemonFailed: 1 }, byLabel: {} },
  halt: {
    id: HALT_ID,
    reason: 'FailureBudgetExceeded',
    wave: 'early',
    at: '2025-03-03T08:42:00Z',
    message: 'wave early: 1 failure(s), the budget allows 0',
    quarantine: 'Applied',
  },
  conditions: [],
};

/** Stores the example rollout (as `name`) with `spec` merged over its spec, and `status` if given. */
export function putRollout(
  store: MemoryRolloutStore,
  spec: Record<string, unknown> = {},
  status?: unknown,
  name = NAME,
): void {
  store.put({ name, spec: { ...EXAMPLE.spec, ...spec }, ...(status === undefined ? {} : { status }) });
}

/** Runs `agent-upgrade rollout …argv --json` on `store`: its exit code, error code and rollout. */
export async function runRollout(store: MemoryRolloutStore, ...argv: string[]) {
  const run = await runCliInMemory(['rollout', ...argv, '--json'], { rolloutStore: store });
  const document = JSON.parse(run.stdout) as {
    ok: boolean;
    error?: { code: string };
    rollout?: Record<string, unknown>;
  };
  return { exitCode: run.exitCode, code: document.error?.code ?? null, rollout: document.rollout };
}

/** The stored rollout's spec.state and spec.resumeFromHalt ('' when unset). */
export function specOf(store: MemoryRolloutStore) {
  const stored = store.peek(NAME)?.spec;
  return { state: stored?.['state'], resumeFromHalt: stored?.['resumeFromHalt'] ?? '' };
}
