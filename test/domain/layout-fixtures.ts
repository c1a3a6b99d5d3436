/**
 * Shared fixtures for the layout tests: the flex defaults (docs/operations.md#the-managed-layout)
 * and `LayoutFacts` built fact by fact. The in-memory host model the facts can also be derived
 * from, and onto which `LayoutAction`s are applied, is in `layout-host-model.ts`.
 */
import { sha256FromHex, type Sha256 } from '../../src/domain/common/digest.js';
import type { Result } from '../../src/domain/common/failure.js';
import type { LayoutFacts, PathFact, ResolvedFact } from '../../src/domain/node/layout/host-facts.js';
import {
  deriveLayout,
  identity,
  type LayoutSettings,
  type PathRole,
  type SlotLayout,
} from '../../src/domain/node/layout/slot-layout.js';

/** The flex settings (production root). */
export const FLEX_SETTINGS: LayoutSettings = {
  root: '/',
  agentName: 'aks-flex-node',
  entry: '/usr/local/bin/aks-flex-node',
  slotDir: '/usr/local/lib/aks-flex-node',
  record: '/etc/aks-flex-node/agent-upgrade-signal.json',
  state: '/etc/aks-flex-node/agent-upgrade-state.json',
  lock: '/run/aks-flex-node-agent-upgrade.lock',
  daemonState: '/etc/aks-flex-node/daemon-state.json',
  unitDir: '/etc/systemd/system',
};

/**
 * The layout table (docs/operations.md#the-managed-layout), role by role, for the flex profile on
 * `/`.
 */
export const FLEX_PATHS: Readonly<Record<PathRole, string>> = {
  entry: '/usr/local/bin/aks-flex-node',
  slotDir: '/usr/local/lib/aks-flex-node',
  blue: '/usr/local/lib/aks-flex-node/aks-flex-node-blue',
  green: '/usr/local/lib/aks-flex-node/aks-flex-node-green',
  current: '/usr/local/lib/aks-flex-node/aks-flex-node-current',
  lastGood: '/usr/local/lib/aks-flex-node/aks-flex-node-last-good',
  recoveryScript: '/usr/local/lib/aks-flex-node/aks-flex-node-recovery.sh',
  record: '/etc/aks-flex-node/agent-upgrade-signal.json',
  activation: '/etc/aks-flex-node/agent-upgrade-activation.json',
  watch: '/etc/aks-flex-node/agent-upgrade-watch.json',
  state: '/etc/aks-flex-node/agent-upgrade-state.json',
  lock: '/run/aks-flex-node-agent-upgrade.lock',
  daemonState: '/etc/aks-flex-node/daemon-state.json',
  unitDir: '/etc/systemd/system',
};

/** Link texts as migration stores them (relative to the link's directory). */
export const TEXT = {
  blue: 'aks-flex-node-blue',
  green: 'aks-flex-node-green',
  current: 'aks-flex-node-current',
  entryToCurrent: '../lib/aks-flex-node/aks-flex-node-current',
} as const;

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.failure.code}: ${result.failure.message}`);
  return result.value;
}

export function flexLayout(root = '/', overrides: Partial<LayoutSettings> = {}): SlotLayout {
  return unwrap(deriveLayout({ ...FLEX_SETTINGS, root, ...overrides }));
}

export const DIGEST_A: Sha256 = sha256FromHex('a'.repeat(64));
export const DIGEST_B: Sha256 = sha256FromHex('b'.repeat(64));

// ---------------------------------------------------------------------------------------------
// Direct PathFact constructors (for shape/ownership tests that need no resolution).

export const missingFact = (): PathFact => ({ kind: 'missing' });
export const fileFact = (executable = true, uid = 0): PathFact => ({ kind: 'file', uid, executable });
export const dirFact = (uid = 0): PathFact => ({ kind: 'directory', uid });
export const otherFact = (uid = 0): PathFact => ({ kind: 'other', uid });
export const linkFact = (text: string, resolved: ResolvedFact, uid = 0): PathFact => ({
  kind: 'symlink',
  uid,
  text,
  resolved,
});

/** A managed flex host, fact by fact: current → blue, last-good → green, entry → current. */
export function managedFacts(layout: SlotLayout, overrides: Partial<Omit<LayoutFacts, 'canonical'>> = {}): LayoutFacts {
  return {
    canonical: identity(layout),
    slotDir: dirFact(),
    entry: linkFact(TEXT.entryToCurrent, { kind: 'file', path: layout.blue, executable: true }),
    blue: fileFact(),
    green: fileFact(),
    current: linkFact(TEXT.blue, { kind: 'file', path: layout.blue, executable: true }),
    lastGood: linkFact(TEXT.green, { kind: 'file', path: layout.green, executable: true }),
    record: fileFact(false),
    state: fileFact(false),
    staleTemps: [],
    ...overrides,
  };
}
