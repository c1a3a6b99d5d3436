import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SimulatedCrash,
  type MemoryFileSystem,
  type RebootMode,
  type Snapshot,
} from '../../src/adapters/memory/memory-file-system.js';
import { FailureSignal } from '../../src/app/failure-signal.js';
import { translatePortError } from '../../src/app/translate-port-error.js';
import type { FaultCode } from '../../src/adapters/memory/memory-ops.js';
import { FileSystemError } from '../../src/domain/port-errors.js';
import {
  checkHostInvariants,
  checkRecordParses,
  hostFromTree,
  LAYOUT,
  reboot,
  resolveInSnapshot,
  sha256,
  tempEntries,
} from './layout-world.js';
import { scenarios, type Scenario } from './layout-scenarios.js';

const MODES: readonly RebootMode[] = ['prefix', 'synced'];

/**
 * A fault surfaces with its code: as the port's own error, or — where the activation reports it
 * as its failure (the state commit after the verdict) — as the failure that error translates to.
 */
function expectFaultSurfaced(outcome: unknown, code: FaultCode): void {
  if (outcome instanceof FailureSignal)
    expect(outcome.failure.code).toBe(translatePortError(new FileSystemError(code, 'write', LAYOUT.state))?.code);
  else expect(outcome).toMatchObject({ constructor: FileSystemError, code });
}

/** `where` names the crash or fault point, so a failure says which one broke the host. */
function expectInvariants(snapshot: Snapshot, scenario: Scenario, where = 'fault-free'): void {
  const problems = checkHostInvariants(snapshot, new Set(scenario.known.map(sha256)));
  if (scenario.startsBroken !== true) {
    expect(problems, where).toEqual([]);
    return;
  }
  const initial = hostFromTree(scenario.tree).snapshot();
  // Cut short before current moved, a host that started without a runnable agent still has
  // current exactly as it was: never broken anew.
  const asBefore = isDeepStrictEqual(snapshot[LAYOUT.current], initial[LAYOUT.current]);
  expect(asBefore ? problems.filter((problem) => !problem.startsWith('I1')) : problems, where).toEqual([]);
  for (const path of scenario.untouched ?? []) expect(snapshot[path], `${where}: ${path}`).toEqual(initial[path]);
}

async function expectCompleted(fs: MemoryFileSystem, scenario: Scenario, where = 'fault-free'): Promise<void> {
  const snapshot = fs.snapshot();
  expectInvariants(snapshot, scenario, where);
  expect(await checkRecordParses(fs), where).toEqual([]);
  expect(resolveInSnapshot(snapshot, LAYOUT.current), where).toBe(scenario.final.current);
  expect(resolveInSnapshot(snapshot, LAYOUT.lastGood), where).toBe(scenario.final.lastGood);
  expect(resolveInSnapshot(snapshot, LAYOUT.entry), where).toBe(scenario.final.current);
  expect(snapshot[scenario.final.current], where).toMatchObject({
    kind: 'file',
    sha256: sha256(scenario.final.currentContent),
  });
  expect(tempEntries(snapshot), where).toEqual([]);
}

/** Runs the command to completion on a rebooted host, then again: the second run changes nothing (I11). */
async function recoverAndCheck(fs: MemoryFileSystem, scenario: Scenario, where: string): Promise<void> {
  await scenario.run(fs);
  await expectCompleted(fs, scenario, `${where}, then a re-run`);
  const once = fs.snapshot();
  await scenario.run(fs);
  expect(fs.snapshot(), where).toEqual(once);
}

/**
 * The enumerations are finite loops that take 20 s alone and up to a minute beside another
 * computing file on a shared core: the bound only catches a hang, it measures nothing.
 */
const ENUMERATION_TIMEOUT_MS = 180_000;

const counts = { crashPoints: 0, secondCrashPoints: 0, faultPoints: 0 };
let stackTraceLimit = Error.stackTraceLimit;
beforeAll(() => {
  // memfs builds an Error per failed lookup; their stacks cost a third of the run time.
  stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
});
afterAll(() => {
  Error.stackTraceLimit = stackTraceLimit;
  console.info(
    `layout: ${counts.crashPoints} crash points (op × durability mode), ${counts.secondCrashPoints} second crashes during recovery, ${counts.faultPoints} errno faults`,
  );
});

function opCountOf(scenario: Scenario): Promise<number> {
  const fs = hostFromTree(scenario.tree);
  return scenario.run(fs).then(() => fs.opCount);
}

describe.each(scenarios)('crash at every operation: $name', (scenario) => {
  it('completes without a crash', async () => {
    const fs = hostFromTree(scenario.tree);
    await scenario.run(fs);
    await expectCompleted(fs, scenario);
  });

  it(
    'keeps I1, I3, I4 after a crash at any op in both durability modes, and recovers idempotently (I11)',
    async () => {
      const opCount = await opCountOf(scenario);
      expect(opCount).toBeGreaterThan(0);
      for (const mode of MODES) {
        for (let crashAt = 0; crashAt < opCount; crashAt += 1) {
          const fs = hostFromTree(scenario.tree);
          fs.crashAt(crashAt);
          await expect(scenario.run(fs), `${mode} crash at op ${crashAt}`).rejects.toBeInstanceOf(SimulatedCrash);
          const rebooted = reboot(fs, mode);
          const where = `${mode} crash at op ${crashAt}`;
          expectInvariants(rebooted.snapshot(), scenario, where);
          expect(await checkRecordParses(rebooted), where).toEqual([]);
          await recoverAndCheck(rebooted, scenario, where);
        }
      }
      counts.crashPoints += opCount * MODES.length;
    },
    ENUMERATION_TIMEOUT_MS,
  );

  // The legacy-host activation (46 ops) is the migrate and managed-host activation scenarios run
  // back to back; its second-crash enumeration (~4,000 runs) adds nothing they do not cover, so it
  // is not generated, which keeps the whole crash-point suite within its time budget.
  // One test per durability mode: the enumeration is quadratic in the ops of an activation.
  if (scenario.secondCrash !== false)
    it.each(MODES)(
      'survives a second crash during recovery at any op (%s durability)',
      async (mode) => {
        const opCount = await opCountOf(scenario);
        for (let first = 0; first < opCount; first += 1) {
          const crashed = hostFromTree(scenario.tree);
          crashed.crashAt(first);
          await scenario.run(crashed).catch((error: unknown) => {
            if (!(error instanceof SimulatedCrash)) throw error;
          });
          const probe = reboot(crashed, mode);
          await scenario.run(probe);
          const recoveryOps = probe.opCount;
          for (let second = 0; second < recoveryOps; second += 1) {
            const host = reboot(crashed, mode);
            host.crashAt(second);
            await expect(scenario.run(host)).rejects.toBeInstanceOf(SimulatedCrash);
            const again = reboot(host, mode);
            const where = `${mode} crash at op ${first}, then at op ${second} of the recovery`;
            expectInvariants(again.snapshot(), scenario, where);
            await recoverAndCheck(again, scenario, where);
          }
          counts.secondCrashPoints += recoveryOps;
        }
      },
      ENUMERATION_TIMEOUT_MS,
    );

  it.each(['ENOSPC', 'EIO', 'EROFS'] as const)(
    'keeps the invariants when op k fails with %s, and a retry converges',
    async (code) => {
      const opCount = await opCountOf(scenario);
      for (let failAt = 0; failAt < opCount; failAt += 1) {
        const fs = hostFromTree(scenario.tree);
        fs.failAt(failAt, code);
        const outcome = await scenario.run(fs).then(
          () => null,
          (error: unknown) => error,
        );
        // A fault in a best-effort step may be absorbed; any other fault surfaces with its code.
        if (outcome !== null) expectFaultSurfaced(outcome, code);
        const where = `${code} at op ${failAt}`;
        expectInvariants(fs.snapshot(), scenario, where);
        await recoverAndCheck(fs, scenario, where);
      }
      counts.faultPoints += opCount;
    },
    ENUMERATION_TIMEOUT_MS,
  );
});
