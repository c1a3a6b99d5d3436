import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';
import type { MemoryFileSystem, Snapshot } from '../../src/adapters/node/memory/memory-file-system.js';
import type { FaultCode } from '../../src/adapters/node/memory/memory-ops.js';
import { FailureSignal } from '../../src/app/common/failure-signal.js';
import { translatePortError } from '../../src/app/common/translate-port-error.js';
import { FileSystemError } from '../../src/domain/common/port-errors.js';
import { currentReplayCommand } from './harness/replay.js';
import { checkHostInvariants, checkRecordParses, LAYOUT, resolveInSnapshot, tempEntries } from './host-invariants.js';
import { hostFromTree, sha256 } from './layout-world.js';
import type { Scenario } from './layout-scenarios.js';

// The layout crash-point suite's assertions: the host checkers (host-invariants.ts) applied to a
// scenario's host after a crash, a fault or a completed command. `where` names the crash or fault
// point; every message also carries the command that replays the test.

function labelled(where: string): string {
  return `${where} (replay: ${currentReplayCommand()})`;
}

/**
 * A fault surfaces with its code: as the port's own error, or — where the activation reports it
 * as its failure (the state commit after the verdict) — as the failure that error translates to.
 */
export function expectFaultSurfaced(outcome: unknown, code: FaultCode): void {
  if (outcome instanceof FailureSignal)
    expect(outcome.failure.code).toBe(translatePortError(new FileSystemError(code, 'write', LAYOUT.state))?.code);
  else expect(outcome).toMatchObject({ constructor: FileSystemError, code });
}

/** I1 and I4 on the snapshot; a host that started broken may stay broken until current moves. */
export function expectInvariants(snapshot: Snapshot, scenario: Scenario, where = 'fault-free'): void {
  const problems = checkHostInvariants(snapshot, new Set(scenario.known.map(sha256)));
  if (scenario.startsBroken !== true) {
    expect(problems, labelled(where)).toEqual([]);
    return;
  }
  const initial = hostFromTree(scenario.tree).snapshot();
  // Cut short before current moved, a host that started without a runnable agent still has
  // current exactly as it was: never broken anew.
  const asBefore = isDeepStrictEqual(snapshot[LAYOUT.current], initial[LAYOUT.current]);
  expect(asBefore ? problems.filter((problem) => !problem.startsWith('I1')) : problems, labelled(where)).toEqual([]);
  for (const path of scenario.untouched ?? [])
    expect(snapshot[path], labelled(`${where}: ${path}`)).toEqual(initial[path]);
}

export async function expectCompleted(fs: MemoryFileSystem, scenario: Scenario, where = 'fault-free'): Promise<void> {
  const snapshot = fs.snapshot();
  const label = labelled(where);
  expectInvariants(snapshot, scenario, where);
  expect(await checkRecordParses(fs), label).toEqual([]);
  expect(resolveInSnapshot(snapshot, LAYOUT.current), label).toBe(scenario.final.current);
  expect(resolveInSnapshot(snapshot, LAYOUT.lastGood), label).toBe(scenario.final.lastGood);
  expect(resolveInSnapshot(snapshot, LAYOUT.entry), label).toBe(scenario.final.current);
  expect(snapshot[scenario.final.current], label).toMatchObject({
    kind: 'file',
    sha256: sha256(scenario.final.currentContent),
  });
  expect(tempEntries(snapshot), label).toEqual([]);
}

/** Runs the command to completion, then again: the second run changes nothing (I11). */
export async function recoverAndCheck(fs: MemoryFileSystem, scenario: Scenario, where: string): Promise<void> {
  await scenario.run(fs);
  await expectCompleted(fs, scenario, `${where}, then a re-run`);
  const once = fs.snapshot();
  await scenario.run(fs);
  expect(fs.snapshot(), labelled(where)).toEqual(once);
}

/** A rebooted host's identity within a scenario: its snapshot, as canonical text. */
function hostKey(scenario: Scenario, snapshot: Snapshot, context = ''): string {
  return `${scenario.name}\n${context}\n${JSON.stringify(snapshot)}`;
}

/**
 * What has been verified from which rebooted host, by scenario and snapshot. A rebooted host is
 * a function of its snapshot alone (`MemoryFileSystem.reboot` rebuilds it from the surviving
 * entries: paths, kinds, contents, modes, owners, link texts) and every command is a fresh
 * process over it, so two crash points that leave equal hosts lead to the same runs from there
 * on; those are verified once. Many do: in `prefix` mode an fsync leaves nothing visible, so a
 * crash just before it and one just after leave the same host, and in `synced` mode whatever was
 * not fsynced yet is lost alike. Every crash point is still run, and the host it leaves checked;
 * only the identical runs after it are shared.
 */
export class VerifiedHosts {
  private readonly recoveries = new Set<string>();
  /** Second-crash enumerations done, by durability mode and host: how many ops the recovery took. */
  private readonly enumerations = new Map<string, number>();
  private sharedRecoveries = 0;
  private sharedEnumerations = 0;

  /** Verifies the recovery from a rebooted host unless that of an equal host was verified. */
  async recoverOnce(fs: MemoryFileSystem, scenario: Scenario, where: string): Promise<void> {
    const key = hostKey(scenario, fs.snapshot());
    if (this.recoveries.has(key)) {
      this.sharedRecoveries += 1;
      return;
    }
    this.recoveries.add(key);
    await recoverAndCheck(fs, scenario, where);
  }

  /**
   * Runs `enumerate` (every second crash during the recovery from this host; it returns the ops
   * of that recovery) unless it ran from an equal host in the same mode; returns those ops.
   */
  async enumerateOnce(
    fs: MemoryFileSystem,
    scenario: Scenario,
    mode: string,
    enumerate: () => Promise<number>,
  ): Promise<number> {
    const key = hostKey(scenario, fs.snapshot(), mode);
    const known = this.enumerations.get(key);
    if (known !== undefined) {
      this.sharedEnumerations += 1;
      return known;
    }
    const recoveryOps = await enumerate();
    this.enumerations.set(key, recoveryOps);
    return recoveryOps;
  }

  describe(): string {
    return `${this.recoveries.size} distinct rebooted hosts recovered (${this.sharedRecoveries} crash points shared one), ${this.enumerations.size} distinct second-crash enumerations (${this.sharedEnumerations} first crashes shared one)`;
  }
}
