/**
 * The fault matrix of the managed (self-hosted) path: every combination, up to a bound, of which
 * port call fails and how, enumerated by the exhaustive choice generator (choice-generator.ts).
 *
 * A scenario chooses, in order: the candidate's behaviour (fixed per test below); optionally one
 * FS op of the fault-free run that fails with an errno; then, at every call of a faultable port
 * method (the 1st and 2nd call of each in the upgrade), whether it succeeds or fails in one of the
 * ways that method can fail — until the budget of faults (2 in all) is spent. Each combination
 * is driven to quiescence by SimHost (bounded rounds; a stuck gate and requeued or failed
 * handling are retried in later rounds) with the invariants checked after every step and at the
 * end: I1, I2/never-downgrade, I4, I5, I6, I7, I12, I8, no temp entries.
 */
import { basenamePath } from '../../src/domain/node/layout/posix-path.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FaultCode, JournalEntry } from '../../src/adapters/node/memory/memory-file-system.js';
import { Gen } from './choice-generator.js';
import { LAYOUT } from './managed-world.js';
import { SimFailure } from './harness/failure.js';
import { currentReplayCommand } from './harness/replay.js';
import { describeFault, FAULT_OPTIONS, type FaultChooser } from './managed-faults.js';
import { SimHost, type Behaviour } from './managed-sim-host.js';

const PORT_FAULTS_MAX = 2;
/** Only the first calls of each method are faulted: later ones are retries of the same thing. */
const ORDINAL_MAX = 2;
/** The temp an atomic write of the download staging file goes through. */
const STAGING_TEMP = `${LAYOUT.slotDir}/.${basenamePath(LAYOUT.downloadStaging)}.tmp-`;
const RECORD_TEMP = '/etc/aks-flex-node/.agent-upgrade-signal.json.tmp-';
const CONTAINER_COPY = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';

interface FsPoint {
  readonly name: string;
  /** Picks the op in the fault-free journal; `nth` counts matches from 1. */
  readonly match: (entry: JournalEntry) => boolean;
  readonly nth: number;
  readonly codes: readonly FaultCode[];
}

const isRename = (path: string) => (entry: JournalEntry) => entry.op === 'rename' && entry.path === path;
const createsTemp = (prefix: string) => (entry: JournalEntry) =>
  entry.op === 'create-temp' && entry.path.startsWith(prefix);

/** The FS ops worth failing: every durable effect of the protocol, once each. */
const FS_POINTS: readonly FsPoint[] = [
  { name: 'record write #1 (row 3)', match: createsTemp(RECORD_TEMP), nth: 1, codes: ['EIO', 'EROFS'] },
  { name: 'blue seeded (migration)', match: isRename(LAYOUT.blue), nth: 1, codes: ['EIO'] },
  { name: 'entry replaced by a link (migration)', match: isRename(LAYOUT.entry), nth: 1, codes: ['EIO'] },
  { name: 'record write #2 (candidate slot)', match: isRename(LAYOUT.record), nth: 2, codes: ['EIO'] },
  { name: 'archive staged', match: createsTemp(STAGING_TEMP), nth: 1, codes: ['ENOSPC'] },
  {
    name: 'candidate written into green',
    match: createsTemp(`${LAYOUT.slotDir}/.aks-flex-node-green.tmp-`),
    nth: 1,
    codes: ['ENOSPC'],
  },
  { name: 'candidate renamed into green', match: isRename(LAYOUT.green), nth: 1, codes: ['EIO'] },
  {
    name: 'record write #3 (healthy: candidate digest; else: failure)',
    match: isRename(LAYOUT.record),
    nth: 3,
    codes: ['EIO'],
  },
  {
    name: 'staging removed',
    match: (entry) => entry.op === 'unlink' && entry.path === LAYOUT.downloadStaging,
    nth: 1,
    codes: ['EIO'],
  },
  { name: 'current link write #2 (switch)', match: isRename(LAYOUT.current), nth: 2, codes: ['EIO'] },
  {
    name: 'slot dir fsync #7 (after the switch)',
    match: (entry) => entry.op === 'fsync-dir' && entry.path === LAYOUT.slotDir,
    nth: 7,
    codes: ['EIO'],
  },
  { name: 'record write #4 (healthy: switch committed)', match: isRename(LAYOUT.record), nth: 4, codes: ['EIO'] },
  { name: 'nspawn copy', match: isRename(CONTAINER_COPY), nth: 1, codes: ['EIO'] },
  { name: 'current link write #3 (rollback)', match: isRename(LAYOUT.current), nth: 3, codes: ['EIO'] },
  { name: 'state committed', match: isRename(LAYOUT.state), nth: 1, codes: ['EIO'] },
  { name: 'record write #5 (completion or failure)', match: isRename(LAYOUT.record), nth: 5, codes: ['EIO'] },
  {
    name: 'record deleted',
    match: (entry) => entry.op === 'unlink' && entry.path === LAYOUT.record,
    nth: 1,
    codes: ['EIO'],
  },
];

interface FsFault {
  readonly name: string;
  readonly index: number;
  readonly code: FaultCode;
}

/** The FS faults of one behaviour: each point located in that behaviour's fault-free journal. */
async function fsFaultsFor(behaviour: Behaviour): Promise<FsFault[]> {
  const host = new SimHost();
  await host.boot();
  await host.upgrade({ name: 'probe', version: '2.0.0', behaviour });
  const journal = host.world.fs.journal;
  const faults: FsFault[] = [];
  for (const point of FS_POINTS) {
    const entry = journal.filter(point.match)[point.nth - 1];
    if (entry === undefined) continue;
    for (const code of point.codes)
      faults.push({ name: `${point.name} op ${entry.index} ${code}`, index: entry.index, code });
  }
  return faults;
}

/** Asks the generator at every faultable port call, until the budget is spent. */
function portFaultChooser(gen: Gen, budget: { left: number }, applied: string[]): FaultChooser {
  return (call) => {
    if (budget.left === 0 || call.ordinal > ORDINAL_MAX) return null;
    const options = FAULT_OPTIONS[call.method];
    const choice = gen.intInclusive(options.length);
    if (choice === 0) return null;
    budget.left -= 1;
    const fault = options[choice - 1] ?? null;
    applied.push(`${call.method}#${call.ordinal}/${choice}`);
    return fault;
  };
}

interface MatrixReport {
  readonly combinations: number;
  readonly outcomes: Record<string, number>;
  readonly failures: string[];
}

/**
 * Runs every combination for one behaviour: `fsFaults` null means no FS fault (two port faults),
 * otherwise one of them (plus `portBudgetWithFs` port faults).
 */
async function runMatrix(
  behaviour: Behaviour,
  fsFaults: readonly FsFault[] | null,
  portBudgetWithFs: number,
): Promise<MatrixReport> {
  const gen = new Gen();
  const outcomes: Record<string, number> = {};
  const failures: string[] = [];
  while (!gen.done()) {
    const fsFault = fsFaults === null ? null : gen.pick(fsFaults);
    const budget = { left: fsFault === null ? PORT_FAULTS_MAX : portBudgetWithFs };
    const applied: string[] = [];
    const host = new SimHost({ faults: portFaultChooser(gen, budget, applied), fsErrnoFaults: fsFault !== null });
    await host.boot();
    if (fsFault !== null) host.world.fs.failAt(fsFault.index, fsFault.code);
    const label = (): string => `${behaviour}; fs: ${fsFault?.name ?? 'none'}; port: ${applied.join(', ') || 'none'}`;
    try {
      const result = await host.upgrade({ name: 'upgrade', version: '2.0.0', behaviour });
      const key = `${result.phase ?? 'none'}`;
      outcomes[key] = (outcomes[key] ?? 0) + 1;
    } catch (error) {
      if (!(error instanceof SimFailure)) throw error;
      failures.push(`[${label()}; choices ${gen.describe()}] ${error.message}`);
    }
  }
  console.info(
    `${behaviour}, ${fsFaults === null ? 'port faults only' : 'one FS fault'}: ${gen.count} combinations, outcomes ${JSON.stringify(outcomes)}, ${failures.length} broken`,
  );
  return { combinations: gen.count, outcomes, failures };
}

function expectNoFailures(report: MatrixReport): void {
  const headlines = report.failures.map((failure) => failure.split('\n')[0]).join('\n');
  const shown = `${headlines}\n\nFirst trace:\n${report.failures[0] ?? ''}`;
  expect(
    report.failures.length,
    `${report.failures.length} of ${report.combinations} combinations broke an invariant (replay: ${currentReplayCommand()}); first ones:\n${shown}`,
  ).toBe(0);
}

const totals = { combinations: 0 };
let stackTraceLimit = Error.stackTraceLimit;
beforeAll(() => {
  // memfs builds an Error per failed lookup; their stacks cost a third of the run time.
  stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
});
afterAll(() => {
  Error.stackTraceLimit = stackTraceLimit;
  console.info(`fault matrix: ${totals.combinations} combinations`);
});

describe('fault matrix of the managed path (every port call × failure mode, ≤ 2 faults)', () => {
  it('a healthy candidate with no fault completes (the baseline the matrix perturbs)', async () => {
    const host = new SimHost();
    await host.boot();
    expect((await host.upgrade({ name: 'upgrade', version: '2.0.0', behaviour: 'healthy' })).phase).toBe('Complete');
  });

  it.each(['healthy', 'crash-on-start', 'crash-after-start', 'version-fails'] as const)(
    '%s candidate: up to two port-call faults',
    async (behaviour) => {
      const report = await runMatrix(behaviour, null, 0);
      totals.combinations += report.combinations;
      expect(report.combinations).toBeGreaterThan(20);
      expectNoFailures(report);
      // Faults may turn a success into Failed, never a failure into Complete.
      if (behaviour !== 'healthy') expect(report.outcomes.Complete ?? 0).toBe(0);
    },
  );

  // Two faults with an FS one for the healthy candidate only: the failing ones fail the same way
  // before the restart, and their FS-only runs cover what differs after it.
  it.each([
    ['healthy', PORT_FAULTS_MAX - 1],
    ['crash-on-start', 0],
    ['crash-after-start', 0],
    ['version-fails', 0],
  ] as const)('%s candidate: one FS op fails, plus up to %i port-call fault', async (behaviour, portBudget) => {
    const fsFaults = await fsFaultsFor(behaviour);
    expect(fsFaults.length).toBeGreaterThan(3);
    const report = await runMatrix(behaviour, fsFaults, portBudget);
    totals.combinations += report.combinations;
    expectNoFailures(report);
    if (behaviour !== 'healthy') expect(report.outcomes.Complete ?? 0).toBe(0);
  });
});

describe('a failed InProgress write followed by a power loss before the retry', () => {
  // Row 4 deletes the record when marking InProgress fails. When the write was in fact applied
  // (the response was lost), the operation is InProgress without a record; a reconciler does not
  // re-queue InProgress operations, so only this process's in-memory retry can still finish it.
  it('every markInProgress failure mode × a crash at each op around the retry × both durability modes ends with exactly one terminal status', async () => {
    const gen = new Gen();
    const failures: string[] = [];
    /** Per failure mode, the op that deletes the record after the failed write (fault-free otherwise). */
    const deletions = new Map<number, number>();
    const deletionOf = async (option: number, faults: FaultChooser): Promise<number> => {
      const known = deletions.get(option);
      if (known !== undefined) return known;
      const probe = new SimHost({ faults });
      await probe.boot();
      await probe.upgrade({ name: 'upgrade', version: '2.0.0', behaviour: 'healthy' });
      const deleted = probe.world.fs.journal.find((entry) => entry.op === 'unlink' && entry.path === LAYOUT.record);
      if (deleted === undefined) throw new Error('row 4 did not delete the record');
      deletions.set(option, deleted.index);
      return deleted.index;
    };
    while (!gen.done()) {
      const option = gen.intInclusive(FAULT_OPTIONS.markInProgress.length - 1);
      const fault = FAULT_OPTIONS.markInProgress[option] ?? null;
      const faults: FaultChooser = (call) => (call.method === 'markInProgress' && call.ordinal === 1 ? fault : null);
      const crashAt = (await deletionOf(option, faults)) + gen.intInclusive(6);
      const mode = gen.pick(['prefix', 'synced'] as const);
      const host = new SimHost({ faults, rebootMode: () => mode });
      await host.boot();
      host.world.fs.crashAt(crashAt);
      try {
        await host.upgrade({ name: 'upgrade', version: '2.0.0', behaviour: 'healthy' });
      } catch (error) {
        if (!(error instanceof SimFailure)) throw error;
        failures.push(
          `[${fault === null ? '' : describeFault({ method: 'markInProgress', ordinal: 1 }, fault)}, crash at op ${crashAt}, ${mode}] ${error.message}`,
        );
      }
    }
    totals.combinations += gen.count;
    expectNoFailures({ combinations: gen.count, outcomes: {}, failures });
  });
});
