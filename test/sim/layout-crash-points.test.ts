/**
 * Every crash point of every layout command (layout-scenarios.ts): a crash at each FS op in both
 * durability modes, a second crash at each op of the recovery from each first one, and an errno
 * at each op. The host checkers (host-invariants.ts) run on the host each leaves; the recovery from
 * it must complete, and a re-run must change nothing (I11). Recoveries from equal rebooted hosts
 * are verified once (VerifiedRecoveries in layout-checks.ts). Exhaustive, so no seed: a failure
 * prints the `npx vitest run … -t '…'` line that replays its test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedCrash, type RebootMode } from '../../src/adapters/node/memory/memory-file-system.js';
import { checkRecordParses } from './host-invariants.js';
import {
  expectCompleted,
  expectFaultSurfaced,
  expectInvariants,
  recoverAndCheck,
  VerifiedHosts,
} from './layout-checks.js';
import { scenarios, type Scenario } from './layout-scenarios.js';
import { hostFromTree, reboot } from './layout-world.js';

const MODES: readonly RebootMode[] = ['prefix', 'synced'];

/**
 * The enumerations are finite loops that take a few seconds alone and longer beside another
 * computing file on a shared core: the bound only catches a hang, it measures nothing.
 */
const ENUMERATION_TIMEOUT_MS = 180_000;

const counts = { crashPoints: 0, secondCrashPoints: 0, faultPoints: 0 };
const verified = new VerifiedHosts();
let stackTraceLimit = Error.stackTraceLimit;
beforeAll(() => {
  // memfs builds an Error per failed lookup; their stacks cost a third of the run time.
  stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
});
afterAll(() => {
  Error.stackTraceLimit = stackTraceLimit;
  console.info(
    `layout: ${counts.crashPoints} crash points (op × durability mode), ${counts.secondCrashPoints} second crashes during recovery, ${counts.faultPoints} errno faults; ${verified.describe()}`,
  );
});

async function opCountOf(scenario: Scenario): Promise<number> {
  const fs = hostFromTree(scenario.tree);
  await scenario.run(fs);
  return fs.opCount;
}

/** The host a crash at op `crashAt` leaves, before the reboot. */
async function crashedAt(scenario: Scenario, crashAt: number): Promise<ReturnType<typeof hostFromTree>> {
  const fs = hostFromTree(scenario.tree);
  fs.crashAt(crashAt);
  await expect(scenario.run(fs), `crash at op ${crashAt}`).rejects.toBeInstanceOf(SimulatedCrash);
  return fs;
}

/**
 * Every second crash during the recovery from one first crash; returns how many there were. The
 * enumeration from a host equal to one already enumerated is the same: it is shared (VerifiedHosts).
 */
async function secondCrashes(scenario: Scenario, mode: RebootMode, first: number): Promise<number> {
  const crashed = await crashedAt(scenario, first);
  const rebooted = reboot(crashed, mode);
  expectInvariants(rebooted.snapshot(), scenario, `${mode} crash at op ${first}`);
  return verified.enumerateOnce(rebooted, scenario, mode, async () => {
    await scenario.run(rebooted);
    const recoveryOps = rebooted.opCount;
    for (let second = 0; second < recoveryOps; second += 1) {
      const host = reboot(crashed, mode);
      host.crashAt(second);
      await expect(scenario.run(host)).rejects.toBeInstanceOf(SimulatedCrash);
      const again = reboot(host, mode);
      const where = `${mode} crash at op ${first}, then at op ${second} of the recovery`;
      expectInvariants(again.snapshot(), scenario, where);
      await verified.recoverOnce(again, scenario, where);
    }
    return recoveryOps;
  });
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
          const rebooted = reboot(await crashedAt(scenario, crashAt), mode);
          const where = `${mode} crash at op ${crashAt}`;
          expectInvariants(rebooted.snapshot(), scenario, where);
          expect(await checkRecordParses(rebooted), where).toEqual([]);
          await verified.recoverOnce(rebooted, scenario, where);
        }
      }
      counts.crashPoints += opCount * MODES.length;
    },
    ENUMERATION_TIMEOUT_MS,
  );

  // The legacy-host activation (46 ops) is the migrate and managed-host activation scenarios run
  // back to back; its second-crash enumeration (~2,000 runs even with equal hosts shared) adds
  // nothing they do not cover, so it is not generated.
  // One test per durability mode: the enumeration is quadratic in the ops of an activation.
  if (scenario.secondCrash !== false)
    it.each(MODES)(
      'survives a second crash during recovery at any op (%s durability)',
      async (mode) => {
        const opCount = await opCountOf(scenario);
        for (let first = 0; first < opCount; first += 1)
          counts.secondCrashPoints += await secondCrashes(scenario, mode, first);
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
        // Not shared: a faulted host is the same process's, with state beyond its snapshot.
        await recoverAndCheck(fs, scenario, where);
      }
      counts.faultPoints += opCount;
    },
    ENUMERATION_TIMEOUT_MS,
  );
});
