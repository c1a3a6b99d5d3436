import type { RolloutAction, RolloutPlan } from './actions.js';
import { computeAvailability } from './availability.js';
import { childManifest, type MachineOperationManifest } from './child-manifest.js';
import { summarizeFailures } from '../status/failure-summary.js';
import type { Fleet } from '../order/fleet.js';
import { buildForwardLedger, type ForwardLedger } from './forward-ledger.js';
import { planInvalidSpec } from '../spec/invalid-spec.js';
import { jsonEqual } from '../status/json-equal.js';
import { rolloutConditions } from '../status/rollout-conditions.js';
import { readPreviousStatus, type PreviousStatus } from '../status/read-rollout-status.js';
import { resolveRelease, type ResolvedRelease } from './resolve-release.js';
import { parseRolloutSpec } from '../spec/parse-rollout-spec.js';
import { currentWave, decide, type Decision } from './rollout-decision.js';
import type { AgentRolloutSpec } from '../spec/rollout-spec.js';
import { TERMINAL_PHASES, type AgentRolloutStatus, type AnalysisStatus } from '../status/rollout-status.js';
import { nextMeasurementAtMs, runAnalyses } from './analysis-run.js';
import { nextScheduleChange, scheduleOpen } from '../spec/schedule-window.js';
import { isLivePhase, type RolloutSnapshot } from '../order/snapshot.js';
import { formatTimestamp, parseTimestamp } from '../spec/time-text.js';
import type { NodeGate, WaveWatch } from './node-verdict.js';
import { transitionEvents } from './transition-events.js';
import { PlannerMemo } from '../order/planner-memo.js';
import { countMachines, waveStatuses } from '../status/build-status.js';
import { ANNOTATION_APPROVE_WAVE, PREVIEW_CANARIES, RELEASE_KIND, ROLLOUT_KIND } from '../spec/rollout-vocabulary.js';

/**
 * The rollout planner: `(snapshot, now) → plan`. Level-based: it recomputes everything from what
 * the informer caches hold and the status it wrote before, and keeps no other memory, so a
 * controller that restarts anywhere plans the same again. Deterministic: the same snapshot at
 * the same instant gives the same plan. `memo` keeps what follows from the snapshot alone from one
 * plan to the next (planner-memo.ts): it changes what a plan costs, never what it says.
 */
export function planRollout(snapshot: RolloutSnapshot, nowMs: number, memo = new PlannerMemo()): RolloutPlan {
  const previous = readPreviousStatus(snapshot.rollout.status);
  const parsed = parseRolloutSpec(snapshot.rollout.spec);
  if (!parsed.ok) return planInvalidSpec(snapshot.rollout, previous, parsed.problems, nowMs);
  if (endedForGood(snapshot, parsed.value, previous))
    return { actions: [], status: previous.raw as AgentRolloutStatus, requeueAfterMs: null };
  const world = observe(snapshot, parsed.value, previous, nowMs, memo);
  const analyses = runAnalyses(
    world.spec.strategy.waves,
    previous.waves,
    snapshot.measurements ?? [],
    resumesNow(world.spec, previous),
    nowMs,
  );
  const decision = decide({
    rolloutUid: snapshot.rollout.uid,
    spec: world.spec,
    previous,
    fleet: world.fleet,
    ledger: world.ledger,
    availability: world.availability,
    release: world.release,
    rollbackRelease: world.rollbackRelease,
    windowOpen: scheduleOpen(world.spec.schedule.windows, nowMs),
    approvedWave: snapshot.rollout.annotations[ANNOTATION_APPROVE_WAVE] ?? '',
    analyses,
    nowMs,
  });
  const { status, creates } = assemble(snapshot, previous, world, decision, analyses, nowMs);
  const changed = !jsonEqual(status, previous.raw);
  const actions: RolloutAction[] = [];
  if (changed || creates.length > 0 || decision.quarantine) {
    actions.push({
      kind: 'UpdateRolloutStatus',
      name: snapshot.rollout.name,
      resourceVersion: snapshot.rollout.resourceVersion,
      status,
    });
  }
  if (decision.quarantine && decision.halt !== null) {
    const reason = `rollout ${snapshot.rollout.name} halted (${decision.halt.id}): ${decision.halt.message}`;
    actions.push({
      kind: 'QuarantineRelease',
      name: world.spec.releaseRef.name,
      quarantine: { quarantined: true, reason },
    });
  }
  for (const operation of creates) actions.push({ kind: 'CreateOperation', operation });
  if (changed) {
    const rollout = { kind: ROLLOUT_KIND, name: snapshot.rollout.name, uid: snapshot.rollout.uid } as const;
    const release =
      snapshot.release && ({ kind: RELEASE_KIND, name: snapshot.release.name, uid: snapshot.release.uid } as const);
    for (const event of transitionEvents(previous, status, decision, rollout, release))
      actions.push({ kind: 'RecordEvent', event });
  }
  const analysisAtMs = decision.forward === null ? null : nextMeasurementAtMs(world.spec.strategy.waves, status.waves);
  return { actions, status, requeueAfterMs: requeueAfter(world, decision, analysisAtMs, nowMs) };
}

/**
 * A rollout that reached a final phase for this generation, with nothing of its own in flight or
 * announced, is done: its status stays as it ended. Recounting it would only follow what others
 * do to its machines afterwards (another rollout upgrading them shows them as conflicts or at
 * target), which says nothing about this rollout. A spec change (a new generation) plans again.
 * Nothing of its own may be live in the status either: the operations an abort left running are
 * counted until the status shows them ended, or it would show them in flight for good.
 */
function endedForGood(snapshot: RolloutSnapshot, spec: AgentRolloutSpec, previous: PreviousStatus): boolean {
  if (previous.phase === null || !TERMINAL_PHASES.includes(previous.phase)) return false;
  // A rollout that ended Succeeded or Aborted can still be rolled back.
  if (spec.state === 'RollBack' && previous.phase !== 'RolledBack' && previous.phase !== 'Failed') return false;
  const raw = previous.raw as { observedGeneration?: unknown };
  if (raw.observedGeneration !== snapshot.rollout.generation) return false;
  const announced = [...previous.waves.map((wave) => wave.pendingCreates), previous.rollback?.pendingCreates ?? []];
  if (announced.some((names) => names.length > 0)) return false;
  if (previous.counts.inFlight > 0 || previous.counts.timedOut > 0) return false;
  return !snapshot.children.some((child) => child.ownerUid === snapshot.rollout.uid && isLivePhase(child.phase));
}

export interface World {
  readonly spec: AgentRolloutSpec;
  readonly release: ResolvedRelease;
  readonly rollbackRelease: ResolvedRelease | null;
  readonly fleet: Fleet;
  readonly ledger: ForwardLedger;
  readonly availability: ReturnType<typeof computeAvailability>;
}

function observe(
  snapshot: RolloutSnapshot,
  spec: AgentRolloutSpec,
  previous: PreviousStatus,
  nowMs: number,
  memo: PlannerMemo,
): World {
  // Once started, the rollout holds on to the release it started with.
  const started = previous.targetSnapshot !== null;
  const signedOnly = snapshot.signedReleasesOnly === true;
  const remembered = started ? previous.release : null;
  const release = resolveRelease(spec.releaseRef.name, snapshot.release, remembered, signedOnly);
  const rollbackRelease =
    spec.rollback === null
      ? null
      : resolveRelease(
          spec.rollback.releaseRef.name,
          snapshot.rollbackRelease,
          previous.rollback?.release ?? null,
          signedOnly,
        );
  const fleet = memo.fleet(snapshot, spec, release.facts, nowMs, nodeGate(snapshot, spec, previous));
  const ledger = buildForwardLedger(spec.strategy.waves, previous.waves, fleet, previous.counts.alreadyAtTarget);
  const rollbackPending = new Set(previous.rollback?.pendingCreates ?? []);
  const rollbackAnnounced = fleet.machines.filter(
    (m) => m.rollback === null && rollbackPending.has(m.rollbackChildName),
  ).length;
  const availability = computeAvailability(
    fleet,
    ledger,
    rollbackAnnounced,
    spec.strategy,
    previous.resumed?.unavailable ?? 0,
  );
  return { spec, release, rollbackRelease, fleet, ledger, availability };
}

/** The Node gate's evidence (node-verdict.ts): the Leases, and each wave's completion and bake from the last status. */
function nodeGate(snapshot: RolloutSnapshot, spec: AgentRolloutSpec, previous: PreviousStatus): NodeGate | null {
  const { enabled, timeoutMs } = spec.strategy.nodeReadiness;
  if (!enabled) return null;
  const waves = new Map<string, WaveWatch>();
  for (const wave of previous.waves)
    waves.set(wave.name, {
      completedMs: parseTimestamp(wave.completedAt),
      bakeUntilMs: parseTimestamp(wave.bakeUntil),
    });
  return { timeoutMs, leases: snapshot.leases ?? null, waves };
}

/** A halt is resumed in this plan (rollout-decision.ts): a failed analysis then starts again. */
function resumesNow(spec: AgentRolloutSpec, previous: PreviousStatus): boolean {
  const halt = previous.halt;
  return (
    spec.state === 'Run' && halt !== null && previous.resumed?.haltId !== halt.id && spec.resumeFromHalt === halt.id
  );
}

function assemble(
  snapshot: RolloutSnapshot,
  previous: PreviousStatus,
  world: World,
  decision: Decision,
  analyses: ReadonlyMap<string, AnalysisStatus>,
  nowMs: number,
): { status: AgentRolloutStatus; creates: MachineOperationManifest[] } {
  const { fleet, ledger, release } = world;
  const waves = waveStatuses(ledger, decision, analyses);
  const announced = waves.flatMap((wave) => wave.announced);
  const counts = countMachines(fleet, ledger, new Set(announced.map((m) => m.name)), decision.rollback);
  const releaseSnapshot = release.snapshot ?? previous.release;
  const shownWave = decision.forward?.current ?? currentWave(ledger) ?? ledger.waves[ledger.waves.length - 1] ?? null;
  const rollbackStatus = decision.rollback?.status ?? previous.rollback;
  const targetSnapshot =
    previous.targetSnapshot ??
    (decision.phase === 'Preview' ? null : { count: fleet.machines.length, takenAt: formatTimestamp(nowMs) });
  const status: AgentRolloutStatus = {
    observedGeneration: snapshot.rollout.generation,
    phase: decision.phase,
    progress: `${counts.succeeded}/${ledger.population}`,
    ...(releaseSnapshot !== null && { release: releaseSnapshot }),
    ...(targetSnapshot !== null && { targetSnapshot }),
    ...(shownWave !== null && { currentWave: shownWave.spec.name }),
    counts,
    waves: waves.map((wave) => wave.status),
    failures: summarizeFailures(fleet),
    ...(decision.halt !== null && { halt: decision.halt }),
    ...(decision.resumed !== null && { resumed: decision.resumed }),
    ...(rollbackStatus !== null && { rollback: rollbackStatus }),
    ...(decision.phase === 'Preview' && { preview: { canaries: canaries(ledger) } }),
    conditions: rolloutConditions(
      world,
      counts,
      previous.conditions,
      snapshot.rollout.generation,
      formatTimestamp(nowMs),
    ),
  };
  const rolloutId = { name: snapshot.rollout.name, uid: snapshot.rollout.uid };
  const forwardCreates = announced.flatMap((machine) => {
    const manifest = childManifest(
      rolloutId,
      machine,
      'upgrade',
      decision.forward?.dispatch?.wave.spec.name ?? '',
      release.spec?.artifacts ?? [],
    );
    return manifest === null ? [] : [manifest];
  });
  const rollbackArtifacts = world.rollbackRelease?.spec?.artifacts ?? [];
  const rollbackAnnounced = decision.rollback?.announced ?? null;
  const rollbackCreates =
    rollbackAnnounced === null || rollbackAnnounced.size === 0
      ? []
      : fleet.machines
          .filter((machine) => rollbackAnnounced.has(machine.name))
          .flatMap((machine) => childManifest(rolloutId, machine, 'rollback', '', rollbackArtifacts) ?? []);
  return { status, creates: [...forwardCreates, ...rollbackCreates] };
}

function canaries(ledger: ForwardLedger): string[] {
  const first = ledger.waves[0];
  if (first === undefined) return [];
  return first.candidates.slice(0, Math.min(PREVIEW_CANARIES, first.size)).map((machine) => machine.name);
}

/**
 * The earliest instant at which time alone changes the plan: a timeout, the end of a bake, a
 * window, a measurement due.
 */
function requeueAfter(world: World, decision: Decision, analysisAtMs: number | null, nowMs: number): number | null {
  let at = Math.min(
    decision.forward?.requeueAtMs ?? Number.POSITIVE_INFINITY,
    analysisAtMs ?? Number.POSITIVE_INFINITY,
  );
  // A window opening or closing changes what may start, and the phase, at that very second.
  if (decision.forward !== null && decision.forward.phase !== 'Succeeded')
    at = Math.min(at, nextScheduleChange(world.spec.schedule.windows, nowMs) ?? Number.POSITIVE_INFINITY);
  const timeoutMs = world.spec.strategy.operationTimeoutMs;
  for (const machine of world.fleet.machines) {
    // A Node the gate waits for, or whose Lease may run out within its wave's watch.
    const nodeChangesAtMs = machine.rollback === null ? machine.forward?.changesAtMs : null;
    if (nodeChangesAtMs !== null && nodeChangesAtMs !== undefined) at = Math.min(at, nodeChangesAtMs);
    const latest = machine.rollback ?? machine.forward;
    if (latest === null || latest.outcome.kind !== 'inFlight' || latest.child.phase === 'Complete') continue;
    const since =
      latest.child.phase === 'InProgress' ? (latest.child.startedMs ?? latest.child.createdMs) : latest.child.createdMs;
    at = Math.min(at, since + timeoutMs + 1);
  }
  return Number.isFinite(at) ? Math.max(0, at - nowMs) : null;
}
