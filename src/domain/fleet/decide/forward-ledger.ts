import { resolveCap, resolveCumulative, resolveTolerance } from '../spec/amount.js';
import { machineByHash, type Fleet, type Machine } from '../order/fleet.js';
import { digestOf, type LossDigest } from './loss-digest.js';
import { tally, type WaveTally } from './wave-tally.js';
import type { WaveSpec } from '../spec/rollout-spec.js';
import type { WaveStatus } from '../status/rollout-status.js';
import { diversePositions } from '../order/target-order.js';
import { MAX_LOST_LISTED, MAX_PENDING_CREATES, PREVIEW_CANARIES } from '../spec/rollout-vocabulary.js';
import {
  announcements,
  dispatchedBy,
  resolveLosses,
  type LossContext,
  type WaveDispatched,
  type WaveLosses,
} from './wave-losses.js';

/**
 * The books of the forward rollout, recomputed on every reconcile from the cluster and the
 * status: the fleet in scope, each wave's target, members, budget and slots, and which machines
 * lost their operation. Nothing here decides; the gates read it.
 *
 * A wave takes its machines in its order: the rollout's hash order (spread over architectures
 * and zones for canary waves) over everything that was free when it ran — its own operations and
 * announced creates, those of the waves after it, and the machines no wave has taken yet. The
 * cursor counts what the wave dispatched. Which of those lost their operation is told by the
 * status (wave-losses.ts); only when more went missing at once than a wave's digest can name, or
 * a status from before it, is it read off the order: the first `cursor` machines of the order
 * (less the machines that left), those of them without an operation, exact while the fleet holds
 * still.
 */

export interface WaveLedger extends WaveTally {
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
  /** Lost machines among the targets and not at the target version. */
  readonly lost: readonly Machine[];
  /** Operations deleted by hand whose machine did not leave the targets, and those of them at the target version. */
  readonly lostCount: number;
  readonly lostAtTarget: number;
  /** The lost machines the status names (bounded in all waves), and the digest of what the wave accounts for. */
  readonly listed: readonly string[];
  readonly digest: LossDigest;
  /** The next machines this wave would take, in its order (for the current wave and the next). */
  readonly candidates: readonly Machine[];
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
  const announcedWave = announcements(previous, fleet);
  const withChild = fleet.machines.filter((m) => m.forward !== null);
  const listed = new Set(previous.flatMap((wave) => wave.lostMachines ?? []));
  const context: LossContext = {
    byHash: (hash) => machineByHash(fleet, hash),
    candidates: () =>
      fleet.machines
        .filter((m) => m.forward === null && !announcedWave.has(m.name) && !listed.has(m.hash))
        .map((m) => m.hash),
    named: new Set(),
    reachedTarget: 0,
  };
  const childrenByWave = groupByWave(withChild);
  const dispatched = waves.map((spec) =>
    dispatchedBy(spec, previous, fleet, childrenByWave.get(spec.name) ?? [], announcedWave),
  );
  const losses = dispatched.map((wave) => resolveLosses(wave, context));
  const lostWave = new Map(losses.flatMap((found, index) => found.lost.map((m) => [m.name, index] as const)));
  const pool = fleet.machines.filter(
    (m) => m.forward === null && m.exclusion === null && !announcedWave.has(m.name) && !lostWave.has(m.name),
  );
  const knownWaves = new Set(waves.map((wave) => wave.name));
  const atTargetNow = fleet.machines.filter((m) => m.forward === null && m.exclusion === 'alreadyAtTarget').length;
  const books: Books = {
    waves,
    // Needed only when a canary wave is ordered; computed once for all of them.
    diverse: waves.some((wave) => wave.diverse) ? diversePositions(fleet.order) : [],
    fleet,
    announcedWave,
    population: withChild.length + announcedWave.size + pool.length + lostWave.size,
    current: waves.findIndex((wave) => previous.find((s) => s.name === wave.name)?.phase !== 'Completed'),
    pool,
    claimed: withChild.filter((m) => !knownWaves.has(m.forward?.wave ?? '')).length,
    lostWave,
    previousTarget: 0,
    candidatesNeeded: true,
    atTargetGrowth: Math.max(0, atTargetNow - previousAtTarget - context.reachedTarget),
    listRoom: MAX_LOST_LISTED,
  };
  const ledgers = waves.map((spec, index) =>
    waveLedger(books, spec, index, dispatched[index] as WaveDispatched, losses[index] as WaveLosses),
  );
  return { waves: ledgers, population: books.population, lost: new Set(lostWave.keys()), undispatched: books.pool };
}

/** What the waves share while they are booked one after the other. */
interface Books {
  readonly waves: readonly WaveSpec[];
  /** Every target machine's position in canary order. */
  readonly diverse: readonly number[];
  readonly fleet: Fleet;
  readonly announcedWave: ReadonlyMap<string, string>;
  readonly population: number;
  readonly current: number;
  /** Machines no wave has taken (nor lost), in hash order. */
  pool: readonly Machine[];
  claimed: number;
  /** Lost machines among the targets, by the index of the wave that lost them. */
  readonly lostWave: Map<string, number>;
  previousTarget: number;
  /** The current wave may finish in this very plan, so the waves after it up to the first one with machines need candidates too. */
  candidatesNeeded: boolean;
  /** Machines found at the target version without an operation since the last status, not yet explained. */
  atTargetGrowth: number;
  /** How many more lost machines the status may name. */
  listRoom: number;
}

function waveLedger(
  books: Books,
  spec: WaveSpec,
  index: number,
  dispatched: WaveDispatched,
  found: WaveLosses,
): WaveLedger {
  const { previous: before, children, goneHashes, announced } = dispatched;
  // A wave reaches at least one machine more than the one before while any remain: on a small
  // fleet, 10% after 1% would otherwise round to the same machine and the wave would be empty.
  const atLeastOne = Math.min(books.population, books.previousTarget + 1);
  const target = Math.max(atLeastOne, resolveCumulative(spec.size, books.population));
  const size = target - books.previousTarget;
  books.previousTarget = target;
  const maxInFlight = resolveCap(spec.maxInFlight, size, 'up');
  const accounted = children.length + goneHashes.length + announced.length;
  const cursor = Math.max(dispatched.cursor - found.vanished, accounted);
  const wanted = index >= books.current && books.candidatesNeeded;
  if (index > books.current && size > 0) books.candidatesNeeded = false;
  const lostCount = cursor - accounted;
  let lostAtTarget = Math.max(0, Math.min(found.lostAtTarget, lostCount - found.lost.length));
  // Lost machines the status could not name (see wave-losses.ts): read off the wave's order.
  const unnamed = Math.max(0, lostCount - found.lost.length - lostAtTarget);
  const explained = Math.min(unnamed, books.atTargetGrowth);
  books.atTargetGrowth -= explained;
  lostAtTarget += explained;
  const free = (m: Machine): boolean => inPool(books, m);
  // Machines lost at the target version are out of the order (excluded: never dispatched again).
  const taken = cursor - goneHashes.length - lostAtTarget;
  const order =
    unnamed === explained && !wanted
      ? []
      : waveOrder(
          books,
          spec,
          index,
          free,
          taken + Math.max(PREVIEW_CANARIES, Math.min(maxInFlight, MAX_PENDING_CREATES)),
        );
  const lost = [...found.lost, ...claimLost(books, order, taken, free, unnamed - explained, index)];
  const listed = lost
    .map((m) => m.hash)
    .sort()
    .slice(0, books.listRoom);
  books.listRoom -= listed.length;
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
    goneChildren: goneHashes.length,
    announced,
    lost,
    lostCount,
    lostAtTarget,
    listed,
    digest: found.digest ?? digestOf([...children, ...announced, ...lost].map((m) => m.hash).concat(goneHashes)),
    candidates: wanted ? order.filter(free) : [],
    ...tally(children, announced.length),
    cursor,
    claimedThrough: books.claimed,
  };
}

/**
 * Whether no wave has taken the machine (nor lost it): the test `books.pool` was filtered with,
 * which claimLost keeps true by taking a lost machine out of the pool as it marks it lost.
 */
function inPool(books: Books, m: Machine): boolean {
  return m.forward === null && m.exclusion === null && !books.announcedWave.has(m.name) && !books.lostWave.has(m.name);
}

/** The free machines among the first `taken` of the order are the lost ones: out of the pool for good. */
function claimLost(
  books: Books,
  order: readonly Machine[],
  taken: number,
  free: (m: Machine) => boolean,
  count: number,
  index: number,
): Machine[] {
  const lost = order.slice(0, taken).filter(free).slice(0, count);
  const names = new Set(lost.map((m) => m.name));
  if (names.size > 0) {
    books.pool = books.pool.filter((m) => !names.has(m.name));
    names.forEach((name) => books.lostWave.set(name, index));
  }
  return lost;
}

/**
 * The first `limit` machines of the wave's order over what was free when it ran: machines it or a
 * later wave took (or announced), and machines no wave has taken.
 */
function waveOrder(
  books: Books,
  spec: WaveSpec,
  index: number,
  free: (m: Machine) => boolean,
  limit: number,
): Machine[] {
  const waveIndex = (name: string | undefined): number =>
    name === undefined ? -1 : books.waves.findIndex((wave) => wave.name === name);
  const member = (m: Machine): boolean =>
    free(m) ||
    waveIndex(m.forward?.wave ?? books.announcedWave.get(m.name)) >= index ||
    (books.lostWave.get(m.name) ?? -1) >= index;
  const out: Machine[] = [];
  const machines = books.fleet.machines;
  const count = spec.diverse ? books.diverse.length : machines.length;
  for (let at = 0; at < count && out.length < limit; at += 1) {
    const machine = machines[spec.diverse ? (books.diverse[at] as number) : at] as Machine;
    if (member(machine)) out.push(machine);
  }
  return out;
}

function groupByWave(withChild: readonly Machine[]): Map<string, Machine[]> {
  const byWave = new Map<string, Machine[]>();
  for (const machine of withChild) {
    const wave = machine.forward?.wave ?? '';
    const members = byWave.get(wave);
    if (members === undefined) byWave.set(wave, [machine]);
    else members.push(machine);
  }
  return byWave;
}
