import { machineByChildName, type Fleet, type Machine } from '../order/fleet.js';
import { combine, decodeDigest, digestOf, EMPTY_DIGEST, membersAmong, type LossDigest } from './loss-digest.js';
import type { WaveSpec } from '../spec/rollout-spec.js';
import type { WaveStatus } from '../status/rollout-status.js';

/**
 * Which machines a wave lost: the ones it dispatched whose operation was deleted by hand. They
 * are never given another operation, and each is counted by what it shows now: at the target
 * version (the daemon finished anyway: alreadyAtTarget, `lostAtTarget`), still a target (lost),
 * or gone from the targets (forgotten, as a vanished machine is).
 *
 * Counts alone cannot tell which machines these are. The wave's order says which machines it
 * passed, but only while the fleet holds still: a lost machine that later reports the target
 * version or vanishes leaves the machines the order runs over, a machine that joins or frees up
 * enters them, and the order then points at a machine that never had an operation. So the status
 * remembers what is needed: the lost machines still among the targets and not at the target
 * version, by name hash (`lostMachines`, bounded), and a digest of every machine the wave
 * accounts for by name (loss-digest.ts), from which the machines whose operation went missing
 * since the last reconcile are named exactly, whatever else changed in the fleet meanwhile.
 */

export interface LossContext {
  readonly byHash: (hash: string) => Machine | undefined;
  /**
   * Machines a wave may have lost unnoticed: no forward operation, not announced, not listed by
   * any wave, and not named by an earlier wave of this plan (`named`). Listed only when a digest
   * is solved, which is rare: most plans never pay for it.
   */
  readonly candidates: () => Iterable<string>;
  readonly named: Set<string>;
  /** Lost machines seen at the target version for the first time in this plan, in every wave. */
  reachedTarget: number;
}

/** What a wave dispatched, as the caches and its last status show it. */
export interface WaveDispatched {
  readonly previous: WaveStatus | null;
  readonly children: readonly Machine[];
  /** Name hashes of the machines of its operations that left the targets. */
  readonly goneHashes: readonly string[];
  readonly announced: readonly Machine[];
  /** Machines dispatched, less the announcements withdrawn since the last status. */
  readonly cursor: number;
  readonly withdrawn: number;
}

export interface WaveLosses {
  /** Lost machines among the targets and not at the target version. */
  readonly lost: readonly Machine[];
  readonly lostAtTarget: number;
  /** Lost machines that left the targets since the last status: out of the cursor. */
  readonly vanished: number;
  /** The last digest when it still holds; `null`: to write anew from what the wave accounts for. */
  readonly digest: LossDigest | null;
}

export function resolveLosses(wave: WaveDispatched, context: LossContext): WaveLosses {
  const before = wave.previous;
  const listed = before?.lostMachines ?? [];
  const lost: Machine[] = [];
  let lostAtTarget = before?.lostAtTarget ?? 0;
  let vanished = 0;
  for (const hash of listed) {
    const machine = context.byHash(hash);
    if (machine === undefined) vanished += 1;
    else if (machine.exclusion === 'alreadyAtTarget' && machine.forward === null) {
      lostAtTarget += 1;
      context.reachedTarget += 1;
    } else if (machine.forward === null) lost.push(machine);
    // A listed machine with an operation again (made by hand) is counted by that operation.
  }
  const accounted = wave.children.length + wave.goneHashes.length + wave.announced.length;
  const missing = wave.cursor - vanished - accounted - lost.length - lostAtTarget;
  const previous = before?.digest === undefined ? EMPTY_DIGEST : decodeDigest(before.digest);
  // The digest holds what the cursor counts but the machines lost at the target version.
  const holds = previous !== null && previous.count + (before?.lostAtTarget ?? 0) === (before?.cursor ?? 0);
  const unchanged = lost.length === listed.length && wave.withdrawn === 0 && missing === 0;
  if (!holds || missing <= 0) return { lost, lostAtTarget, vanished, digest: holds && unchanged ? previous : null };
  const known = new Set([
    ...wave.children.map((machine) => machine.hash),
    ...wave.goneHashes,
    ...wave.announced.map((machine) => machine.hash),
    ...(before?.pendingCreates ?? []).map((name) => name.slice(-12)),
    ...listed,
  ]);
  const residual = combine(previous, digestOf(known), -1);
  // More missing than the digest can name, or not what the counts say: the wave's order decides.
  const named = residual.count === missing ? membersAmong(residual, unnamed(context)) : null;
  if (named === null) return { lost, lostAtTarget, vanished, digest: null };
  for (const hash of named) {
    context.named.add(hash);
    const machine = context.byHash(hash) as Machine;
    if (machine.exclusion === 'alreadyAtTarget') {
      lostAtTarget += 1;
      context.reachedTarget += 1;
    } else lost.push(machine);
  }
  return { lost, lostAtTarget, vanished: vanished + missing - named.length, digest: null };
}

function* unnamed(context: LossContext): Iterable<string> {
  for (const hash of context.candidates()) if (!context.named.has(hash)) yield hash;
}

export function dispatchedBy(
  spec: WaveSpec,
  previous: readonly WaveStatus[],
  fleet: Fleet,
  children: readonly Machine[],
  announcedWave: ReadonlyMap<string, string>,
): WaveDispatched {
  const before = previous.find((status) => status.name === spec.name) ?? null;
  const goneHashes = fleet.goneChildrenByWave.get(spec.name) ?? [];
  const announced = inFleetOrder(fleet, announcedWave, spec.name);
  const withdrawn = droppedAnnouncements(before, announced.length, fleet);
  const accounted = children.length + goneHashes.length + announced.length;
  return {
    previous: before,
    children,
    goneHashes,
    announced,
    cursor: Math.max((before?.cursor ?? 0) - withdrawn, accounted),
    withdrawn,
  };
}

/** The machines announced for `wave`, in the fleet's order. */
function inFleetOrder(fleet: Fleet, announcedWave: ReadonlyMap<string, string>, wave: string): Machine[] {
  const positions: number[] = [];
  for (const [name, announcedIn] of announcedWave) {
    const index = fleet.order.indexByName.get(name);
    if (announcedIn === wave && index !== undefined) positions.push(index);
  }
  return positions.sort((a, b) => a - b).map((index) => fleet.machines[index] as Machine);
}

/**
 * Machines announced in pendingCreates whose operation does not exist yet, by wave. An announced
 * machine that left the targets or may no longer get an operation (opted out, busy, at target)
 * is dropped: creating it now could break a promise the announcement did not check.
 */
export function announcements(previous: readonly WaveStatus[], fleet: Fleet): Map<string, string> {
  const announced = new Map<string, string>();
  for (const wave of previous) {
    for (const name of wave.pendingCreates) {
      const machine = machineByChildName(fleet, name);
      if (machine === undefined || machine.forward !== null || machine.exclusion !== null) continue;
      announced.set(machine.name, wave.name);
    }
  }
  return announced;
}

/** Announced names that neither exist now nor are still announced: withdrawn from the cursor. */
function droppedAnnouncements(before: WaveStatus | null, kept: number, fleet: Fleet): number {
  if (before === null) return 0;
  const names = new Set(before.pendingCreates.filter((name) => name !== ''));
  const observed = [...names].filter((name) => machineByChildName(fleet, name)?.forward?.child.name === name).length;
  return Math.max(0, names.size - kept - observed);
}
