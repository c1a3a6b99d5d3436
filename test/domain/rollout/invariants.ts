/** What must hold after every step of every simulated rollout, checked against the world itself. */
import { expect } from 'vitest';
import { resolveCap } from '../../../src/domain/fleet/spec/amount.js';
import { parseRolloutSpec } from '../../../src/domain/fleet/spec/parse-rollout-spec.js';
import { LABEL_PURPOSE, LABEL_WAVE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { isLive, type RolloutWorld } from './rollout-world.js';

const USABLE = ['DaemonFailed', 'ExecutionFailed', 'InvalidParameters'];

export interface Observed {
  /** The largest failure overshoot seen: failures − (allowed + maxInFlight), per wave. */
  worstMargin: number;
}

/**
 * The largest maxInFlight each wave has had in this run (and, under the empty name, the largest
 * maxUnavailable): a percentage cap shrinks with the fleet (a machine deleted, or found at the
 * target version after its operation was deleted), and what was in flight under the larger cap is
 * never cancelled.
 */
const capsSeen = new WeakMap<RolloutWorld, Map<string, number>>();

export function checkInvariants(world: RolloutWorld, label: string, observed?: Observed): void {
  const status = world.rolloutStatus();
  const parsed = parseRolloutSpec(world.spec);
  if (status === null || !parsed.ok) return;
  const spec = parsed.value;
  const at = `${label}, step ${world.step}`;
  const operations = [...world.operations.values()].filter((op) => world.nodes.has(op.machineRef));
  const timeoutMs = spec.strategy.operationTimeoutMs;
  for (const wave of status.waves) {
    const waveSpec = spec.strategy.waves.find((entry) => entry.name === wave.name);
    if (waveSpec === undefined) continue;
    const members = operations.filter(
      (op) => op.labels[LABEL_WAVE] === wave.name && op.labels[LABEL_PURPOSE] === 'upgrade',
    );
    const seen = capsSeen.get(world) ?? new Map<string, number>();
    capsSeen.set(world, seen);
    const cap = Math.max(seen.get(wave.name) ?? 0, resolveCap(waveSpec.maxInFlight, wave.size, 'up'));
    seen.set(wave.name, cap);
    expect(members.filter(isLive).length, `${at}: wave ${wave.name} in flight`).toBeLessThanOrEqual(cap);
    const failures = members.filter(
      (op) =>
        op.phase === 'Failed' ||
        (op.phase === 'InProgress' && op.startedMs !== null && world.nowMs - op.startedMs > timeoutMs),
    ).length;
    // The halt comes with the failure that exceeds the budget; the other operations then in
    // flight (at most maxInFlight − 1) may fail too: (allowed + 1) + (maxInFlight − 1).
    expect(failures, `${at}: wave ${wave.name} failures`).toBeLessThanOrEqual(wave.failureBudget.allowed + cap);
    if (observed !== undefined)
      observed.worstMargin = Math.max(observed.worstMargin, failures - wave.failureBudget.allowed - cap);
  }
  if (spec.strategy.maxUnavailable !== null && status.resumed === undefined) {
    const population = Number(status.progress.split('/')[1]);
    const seen = capsSeen.get(world) ?? new Map<string, number>();
    capsSeen.set(world, seen);
    // The fleet-wide cap shrinks with the population too (machines vanish, lost ones report the target).
    const cap = Math.max(seen.get('') ?? 0, resolveCap(spec.strategy.maxUnavailable, population, 'down'));
    seen.set('', cap);
    const latest = new Map<string, (typeof operations)[number]>();
    for (const op of operations) {
      const before = latest.get(op.machineRef);
      if (before === undefined || op.labels[LABEL_PURPOSE] === 'rollback') latest.set(op.machineRef, op);
    }
    const timedOut = (op: (typeof operations)[number]): boolean =>
      world.nowMs - (op.phase === 'InProgress' ? (op.startedMs ?? op.createdMs) : op.createdMs) > timeoutMs;
    const unavailable = [...latest.values()].filter(
      (op) => isLive(op) || (op.phase === 'Failed' && !USABLE.includes(op.reason ?? '')),
    ).length;
    // A rollback repairs what is stuck, so only its running operations are held to the cap.
    const running = [...latest.values()].filter((op) => isLive(op) && !timedOut(op)).length;
    if (status.rollback === undefined) expect(unavailable, `${at}: unavailable`).toBeLessThanOrEqual(cap);
    else expect(running, `${at}: running during rollback`).toBeLessThanOrEqual(cap);
  }
  const { targets, excluded, ...classes } = status.counts;
  const sum = Object.values(excluded).reduce((a, b) => a + b, 0) + Object.values(classes).reduce((a, b) => a + b, 0);
  const gone = new Set(
    [...world.operations.values()].filter((op) => !world.nodes.has(op.machineRef)).map((op) => op.machineRef),
  );
  expect(sum, `${at}: every target in exactly one class`).toBe(targets + gone.size);
  for (const [id, index] of world.haltedAtCreate) {
    if (status.resumed?.haltId === id) continue;
    const after = world.creates.slice(index).filter((create) => create.purpose === 'upgrade');
    expect(after, `${at}: forward creates after halt ${id}`).toEqual([]);
  }
}
