import { resolveCap, resolveCumulative, resolveTolerance } from './amount.js';
import { chargesBudget, holdsSlot, REASON_INVALID_PARAMETERS } from './classify-child.js';
import type { Fleet, Machine } from './fleet.js';
import { diverseOrder } from './machine-order.js';
import type { WaveSpec } from './rollout-spec.js';
import type { WaveStatus } from './rollout-status.js';
import { MAX_PENDING_CREATES, PREVIEW_CANARIES } from './vocabulary.js';

/**
 * The books of the forward rollout, recomputed on every reconcile from the cluster and the
 * status: the fleet in scope, each wave's target, members, budget and slots, and which machines
 * lost their operation. Nothing here decides; the gates read it.
 *
 * A wave takes its machines in its order: the rollout's hash order (spread over architectures
 * and zones for canary waves) over everything that was free when it ran — its own operations and
 * announced creates, those of the waves after it, and the machines no wave has taken yet. That
 * set changes neither when an operation is deleted by hand nor when later waves dispatch, so
 * neither does the order. The cursor counts what the wave
 * dispatched; what it dispatched is therefore the first `cursor` machines of the order (less the
 * machines that left), and those of them without an operation now are lost: counted, reported,
 * never dispatched again. Exact while the fleet holds still; when machines join or leave, the
 * count stays exact and the identity is the best the order can tell.
 */

export interface WaveLedger {
  readonly spec: WaveSpec;
  readonly index: number;
  readonly previous: WaveStatus | null;
  /** Machines reached when the wave ends (cumulative), and the wave's own share. */
  readonly target: number;
  readonly size: number;
  readonly maxInFlight: number;
  readonly allowedFailures: number;
  readonly children: readonly Machine[];
  readonly goneChildren: number;
  /** Announced in the last status and not created yet, and still creatable. */
  readonly announced: readonly Machine[];
  readonly lost: readonly Machine[];
  /** Operations deleted by hand, all of them, and those whose machine was at the target version. */
  readonly lostCount: number;
  readonly lostAtTarget: number;
  /** The next machines this wave would take, in its order (for the current wave and the next). */
  readonly candidates: readonly Machine[];
  /** Operations holding a slot (live, timed out or not) plus announced creates. */
  readonly slots: number;
  /** Operations still running within their timeout plus announced creates: the wave is not done. */
  readonly running: number;
  readonly timedOutLive: number;
  readonly usedFailures: number;
  readonly invalidParameters: number;
  readonly cursor: number;
  /** Machines of the population this wave and the ones before it have taken. */
  readonly claimedThrough: number;
}

export interface ForwardLedger {
  readonly waves: readonly WaveLedger[];
  /** Machines in scope: with an operation of this rollout, announced, lost, or still to dispatch. */
  readonly population: number;
  readonly lost: ReadonlySet<string>;
  /** Machines still to dispatch, in rollout order. */
  readonly undispatched: readonly Machine[];
}

export function buildForwardLedger(
  waves: readonly WaveSpec[],
  previous: readonly WaveStatus[],
  fleet: Fleet,
  previousAtTarget: number,
): ForwardLedger {
  const byChildName = new Map(fleet.machines.map((m) => [m.childName, m]));
  const announcedWave = announcements(previous, byChildName);
  const withChild = fleet.machines.filter((m) => m.forward !== null);
  const pool = fleet.machines.filter((m) => m.forward === null && m.exclusion === null && !announcedWave.has(m.name));
  const knownWaves = new Set(waves.map((wave) => wave.name));
  const books: Books = {
    waves,
    // Needed only when a canary wave is ordered; computed once for all of them.
    diverse: waves.some((wave) => wave.diverse) ? diverseOrder(fleet.machines) : [],
    previous,
    fleet,
    byChildName,
    announcedWave,
    withChild,
    population: withChild.length + announcedWave.size + pool.length,
    current: waves.findIndex((wave) => previous.find((s) => s.name === wave.name)?.phase !== 'Completed'),
    pool,
    claimed: withChild.filter((m) => !knownWaves.has(m.forward?.wave ?? '')).length,
    lost: new Set<string>(),
    previousTarget: 0,
    candidatesNeeded: true,
    atTargetGrowth: Math.max(
      0,
      fleet.machines.filter((m) => m.forward === null && m.exclusion === 'alreadyAtTarget').length - previousAtTarget,
    ),
  };
  const ledgers = waves.map((spec, index) => waveLedger(books, spec, index));
  return { waves: ledgers, population: books.population, lost: books.lost, undispatched: books.pool };
}

/** What the waves share while they are booked one after the other. */
interface Books {
  readonly waves: readonly WaveSpec[];
  /** Every target machine in canary order. */
  readonly diverse: readonly Machine[];
  readonly previous: readonly WaveStatus[];
  readonly fleet: Fleet;
  readonly byChildName: ReadonlyMap<string, Machine>;
  readonly announcedWave: ReadonlyMap<string, string>;
  readonly withChild: readonly Machine[];
  readonly population: number;
  readonly current: number;
  /** Machines no wave has taken (nor lost), in hash order. */
  pool: readonly Machine[];
  claimed: number;
  readonly lost: Set<string>;
  previousTarget: number;
  /** The current wave may finish in this very plan, so the waves after it up to the first one with machines need candidates too. */
  candidatesNeeded: boolean;
  /** Machines found at the target version without an operation since the last status, not yet explained. */
  atTargetGrowth: number;
}

function waveLedger(books: Books, spec: WaveSpec, index: number): WaveLedger {
  const before = books.previous.find((status) => status.name === spec.name) ?? null;
  const target = Math.max(books.previousTarget, resolveCumulative(spec.size, books.population));
  const size = target - books.previousTarget;
  books.previousTarget = target;
  const maxInFlight = resolveCap(spec.maxInFlight, size, 'up');
  const children = books.withChild.filter((m) => m.forward?.wave === spec.name);
  const goneChildren = books.fleet.goneChildrenByWave.get(spec.name) ?? 0;
  const announced = books.fleet.machines.filter((m) => books.announcedWave.get(m.name) === spec.name);
  const accounted = children.length + goneChildren + announced.length;
  const cursor = Math.max(
    (before?.cursor ?? 0) - droppedAnnouncements(before, announced.length, books.byChildName),
    accounted,
  );
  const wanted = index >= books.current && books.candidatesNeeded;
  if (index > books.current && size > 0) books.candidatesNeeded = false;
  const lostCount = cursor - accounted;
  const lostAtTarget = lostAtTargetOf(books, before, lostCount);
  const free = new Set(books.pool.map((m) => m.name));
  // Lost machines at the target version are out of the order (excluded: never dispatched again).
  const taken = cursor - goneChildren - lostAtTarget;
  const order =
    lostCount === lostAtTarget && !wanted
      ? []
      : waveOrder(
          books,
          spec,
          index,
          free,
          taken + Math.max(PREVIEW_CANARIES, Math.min(maxInFlight, MAX_PENDING_CREATES)),
        );
  const lost = claimLost(books, order, taken, free, lostCount - lostAtTarget);
  const lostNames = new Set(lost.map((m) => m.name));
  books.claimed += children.length + announced.length + lost.length;
  return {
    spec,
    index,
    previous: before,
    target,
    size,
    maxInFlight,
    allowedFailures: resolveTolerance(spec.failureBudget, size),
    children,
    goneChildren,
    announced,
    lost,
    lostCount,
    lostAtTarget,
    candidates: wanted ? order.filter((m) => free.has(m.name) && !lostNames.has(m.name)) : [],
    ...tally(children, announced.length),
    cursor,
    claimedThrough: books.claimed,
  };
}

/** The free machines among the first `taken` of the order are the lost ones: out of the pool for good. */
function claimLost(
  books: Books,
  order: readonly Machine[],
  taken: number,
  free: ReadonlySet<string>,
  count: number,
): Machine[] {
  const lost = order
    .slice(0, taken)
    .filter((m) => free.has(m.name))
    .slice(0, count);
  const names = new Set(lost.map((m) => m.name));
  if (names.size > 0) {
    books.pool = books.pool.filter((m) => !names.has(m.name));
    names.forEach((name) => books.lost.add(name));
  }
  return lost;
}

/**
 * How many of a wave's lost operations had a machine at the target version. A completed
 * operation deleted by hand leaves a machine that now reports the target version and has no
 * operation, indistinguishable from one that was at the target before the rollout, except at
 * the moment it happens: the wave loses an operation as the fleet gains such a machine. That is
 * written down (lostAtTarget), so those losses are never blamed on a machine still to upgrade.
 */
function lostAtTargetOf(books: Books, before: WaveStatus | null, lostCount: number): number {
  const newlyLost = Math.max(0, lostCount - (before?.lost ?? 0));
  const explained = Math.min(newlyLost, books.atTargetGrowth);
  books.atTargetGrowth -= explained;
  return Math.min(lostCount, (before?.lostAtTarget ?? 0) + explained);
}

/**
 * The first `limit` machines of the wave's order over what was free when it ran: machines it or a
 * later wave took (or announced), and machines no wave has taken.
 */
function waveOrder(books: Books, spec: WaveSpec, index: number, free: ReadonlySet<string>, limit: number): Machine[] {
  const waveIndex = (name: string | undefined): number =>
    name === undefined ? -1 : books.waves.findIndex((wave) => wave.name === name);
  const member = (m: Machine): boolean =>
    free.has(m.name) || waveIndex(m.forward?.wave ?? books.announcedWave.get(m.name)) >= index;
  const out: Machine[] = [];
  for (const machine of spec.diverse ? books.diverse : books.fleet.machines) {
    if (out.length >= limit) break;
    if (member(machine)) out.push(machine);
  }
  return out;
}

function tally(
  children: readonly Machine[],
  announced: number,
): Pick<WaveLedger, 'slots' | 'running' | 'timedOutLive' | 'usedFailures' | 'invalidParameters'> {
  let slots = announced;
  let running = announced;
  let timedOutLive = 0;
  let usedFailures = 0;
  let invalidParameters = 0;
  for (const machine of children) {
    const outcome = machine.forward?.outcome;
    if (outcome === undefined) continue;
    if (holdsSlot(outcome)) slots += 1;
    if (outcome.kind === 'inFlight') running += 1;
    if (outcome.kind === 'timedOut') timedOutLive += 1;
    if (chargesBudget(outcome)) usedFailures += 1;
    if (outcome.kind === 'failed' && outcome.reason === REASON_INVALID_PARAMETERS) invalidParameters += 1;
  }
  return { slots, running, timedOutLive, usedFailures, invalidParameters };
}

/**
 * Machines announced in pendingCreates whose operation does not exist yet, by wave. An announced
 * machine that left the targets or may no longer get an operation (opted out, busy, at target)
 * is dropped: creating it now could break a promise the announcement did not check.
 */
function announcements(
  previous: readonly WaveStatus[],
  byChildName: ReadonlyMap<string, Machine>,
): Map<string, string> {
  const announced = new Map<string, string>();
  for (const wave of previous) {
    for (const name of wave.pendingCreates) {
      const machine = byChildName.get(name);
      if (machine === undefined || machine.forward !== null || machine.exclusion !== null) continue;
      announced.set(machine.name, wave.name);
    }
  }
  return announced;
}

/** Announced names that neither exist now nor are still announced: withdrawn from the cursor. */
function droppedAnnouncements(
  before: WaveStatus | null,
  kept: number,
  byChildName: ReadonlyMap<string, Machine>,
): number {
  if (before === null) return 0;
  const names = new Set(before.pendingCreates.filter((name) => name !== ''));
  const observed = [...names].filter((name) => byChildName.get(name)?.forward?.child.name === name).length;
  return Math.max(0, names.size - kept - observed);
}
