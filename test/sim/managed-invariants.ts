import type { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import type { OperationPhase } from '../../src/ports/node/operation-store.js';
import type { Checker } from './harness/failure.js';
import type { Tracked } from './managed-operations.js';
import type { HostView, VersionLabels } from './managed-view.js';

// The managed simulation's checkers (docs/protocol.md#invariants-i1i12), apart from the world
// they judge: those that must hold after every step, and those that must hold once the host is
// quiescent after an upgrade.

/** What the per-step checkers read. */
export interface StepView {
  readonly host: HostView;
  readonly store: MemoryOperationStore;
  readonly versions: VersionLabels;
  readonly operations: readonly string[];
  /** The upgrade under way, with its phase in the cluster now; null between upgrades. */
  readonly active: { readonly tracked: Tracked; readonly phase: OperationPhase | null } | null;
}

/** I1: the agent starts from current, or from the legacy entry while current does not resolve. */
const runnableAgent: Checker<StepView> = ({ host, versions }) => {
  if (host.currentDigest === null) return ['I1: no runnable agent binary'];
  if (!host.currentExecutable) return ['I1: the current binary is not executable'];
  if (!versions.has(host.currentDigest))
    return [`I1: the current binary has an unknown digest ${host.currentDigest.slice(0, 8)} (torn or empty)`];
  return [];
};

const recordParses: Checker<StepView> = ({ host }) =>
  host.record === 'invalid' ? ['I4: the record does not parse'] : [];

/** I5: never a second, different terminal status; never two terminal writes of one operation. */
const oneTerminalStatus: Checker<StepView> = ({ store, operations }) => [
  ...(store.violations.length > 0
    ? [`I5: a second, different terminal status: ${JSON.stringify(store.violations)}`]
    : []),
  ...operations
    .filter((name) => store.terminalWrites(name) > 1)
    .map((name) => `I5: ${name} became terminal ${store.terminalWrites(name)} times`),
];

/** I2: during an upgrade current names the previous binary or the candidate, nothing else. */
const previousOrCandidate: Checker<StepView> = ({ host, versions, active }) => {
  if (active === null) return [];
  const { previousDigest, candidateDigest } = active.tracked;
  const current = host.currentDigest;
  if (current === previousDigest || current === candidateDigest) return [];
  return [
    `I2: current names ${versions.of(current)}, neither the previous ${versions.of(previousDigest)} nor the candidate`,
  ];
};

/** I7: at the step that publishes Complete, current and the nspawn copy are the candidate. */
const completeWithCopy: Checker<StepView> = ({ host, versions, active }) => {
  if (active === null || active.phase !== 'Complete' || active.tracked.lastPhase === 'Complete') return [];
  const { candidateDigest } = active.tracked;
  if (host.currentDigest === candidateDigest && host.nspawn === host.currentDigest) return [];
  return [
    `I7: Complete published with current ${versions.of(host.currentDigest)} and nspawn ${versions.of(host.nspawn)}; candidate ${versions.of(candidateDigest)}`,
  ];
};

export const STEP_CHECKERS: readonly Checker<StepView>[] = [
  runnableAgent,
  recordParses,
  oneTerminalStatus,
  previousOrCandidate,
  completeWithCopy,
];

/** What the checkers at quiescence read. */
export interface SettledView {
  readonly host: HostView;
  readonly store: MemoryOperationStore;
  readonly versions: VersionLabels;
  readonly tracked: Tracked;
  /** Temp entries left once the next start has swept (see SimHost). */
  readonly temps: readonly string[];
  /** The digest the unit's main process runs, or null when it runs nothing. */
  readonly running: string | null;
  /** Every log line, status and argv the run produced, as one text. */
  readonly exposed: string;
  readonly canary: string;
}

/** I5 exactly once, I6 the record gone, I12 the outcome matches the candidate and current. */
const outcome: Checker<SettledView> = ({ host, store, versions, tracked }) => {
  const problems: string[] = [];
  const name = tracked.spec.name;
  const status = store.get(name);
  if (store.terminalWrites(name) !== 1)
    problems.push(`I5: ${name} has ${store.terminalWrites(name)} terminal writes (phase ${status?.phase ?? 'none'})`);
  if (host.record !== null) problems.push('I6: the record is still there');
  const current = host.currentDigest;
  if (status?.phase === 'Complete') {
    if (current !== tracked.candidateDigest) problems.push(`I12: Complete but current is ${versions.of(current)}`);
    if (tracked.spec.behaviour !== 'healthy' || tracked.spec.wrongDigest === true)
      problems.push(`I12: Complete for a ${tracked.spec.behaviour} candidate`);
  } else if (status?.phase === 'Failed') {
    if (current !== tracked.previousDigest)
      problems.push(
        `I12: Failed but current is ${versions.of(current)}, not the previous ${versions.of(tracked.previousDigest)}`,
      );
  } else {
    problems.push(`I5: ${name} ended ${status?.phase ?? 'without a status'}`);
  }
  return problems;
};

/** I7/I12: the copy equals current; no temps; the unit runs current (a legacy process the same bytes). */
const hostAtRest: Checker<SettledView> = ({ host, versions, temps, running }) => [
  ...(host.nspawn !== host.currentDigest
    ? [`I7/I12: nspawn holds ${versions.of(host.nspawn)} while current is ${versions.of(host.currentDigest)}`]
    : []),
  ...(temps.length > 0 ? [`temp entries left: ${temps.join(', ')}`] : []),
  ...(running !== host.currentDigest
    ? [`I12: the unit runs ${versions.of(running)}, not current ${versions.of(host.currentDigest)}`]
    : []),
];

/** I8: the URL's query (a credential) reaches no log line, status or argv. */
const secretKept: Checker<SettledView> = ({ exposed, canary }) =>
  exposed.includes(canary) ? ['I8: the URL query reached a log line, status or argv'] : [];

export const SETTLED_CHECKERS: readonly Checker<SettledView>[] = [outcome, hostAtRest, secretKept];
