/**
 * A tiny in-memory host model for the layout tests (paths → files, links, directories), from
 * which `LayoutFacts` are derived the way the app observes them, and onto which `LayoutAction`s
 * can be applied to simulate a migration.
 */
import {
  tempPrefixFor,
  type LayoutFacts,
  type PathFact,
  type ResolvedFact,
} from '../../src/domain/node/layout/host-facts.js';
import type { LayoutAction } from '../../src/domain/node/layout/migration-plan.js';
import {
  basenamePath,
  dirnamePath,
  isPathInside,
  joinPath,
  resolveLinkTarget,
} from '../../src/domain/node/layout/posix-path.js';
import {
  identity,
  PATH_ROLES,
  type CanonicalPaths,
  type PathRole,
  type SlotLayout,
} from '../../src/domain/node/layout/slot-layout.js';

export type HostNode =
  | { readonly type: 'file'; readonly executable: boolean; readonly uid: number; readonly content: string }
  | { readonly type: 'symlink'; readonly text: string; readonly uid: number }
  | { readonly type: 'dir'; readonly uid: number }
  | { readonly type: 'other'; readonly uid: number };

export type Host = ReadonlyMap<string, HostNode>;

export const file = (content = 'legacy', executable = true, uid = 0): HostNode => ({
  type: 'file',
  executable,
  uid,
  content,
});
export const link = (text: string, uid = 0): HostNode => ({ type: 'symlink', text, uid });
export const dir = (uid = 0): HostNode => ({ type: 'dir', uid });
export const special = (uid = 0): HostNode => ({ type: 'other', uid });

export type HostRole = 'slotDir' | 'entry' | 'blue' | 'green' | 'current' | 'lastGood' | 'record' | 'state';

/**
 * A compact host description: which roles exist and what they are. `slotDir` defaults to a
 * directory whenever any slot or link is given, else to missing. `extra` places nodes at
 * arbitrary absolute paths (e.g. an executable outside the slots).
 */
export type HostSpec = Partial<Record<HostRole, HostNode | null>> & {
  readonly extra?: Readonly<Record<string, HostNode>>;
};

export function buildHost(layout: SlotLayout, spec: HostSpec): Host {
  const host = new Map<string, HostNode>();
  const inSlotDir = (['blue', 'green', 'current', 'lastGood'] as const).some((role) => spec[role] != null);
  const slotDirNode = spec.slotDir === undefined ? (inSlotDir ? dir() : null) : spec.slotDir;
  if (slotDirNode !== null) host.set(layout.slotDir, slotDirNode);
  for (const role of ['entry', 'blue', 'green', 'current', 'lastGood', 'record', 'state'] as const) {
    const node = spec[role];
    if (node != null) host.set(layout[role], node);
  }
  for (const [path, node] of Object.entries(spec.extra ?? {})) host.set(path, node);
  return host;
}

const LINK_HOPS_MAX = 40;

/** Follows links from `path` the way `realpath` would (only final components are links here). */
export function resolveIn(host: Host, path: string): ResolvedFact {
  let at = path;
  for (let hop = 0; hop <= LINK_HOPS_MAX; hop += 1) {
    const node = host.get(at);
    if (node === undefined) return { kind: 'dangling' };
    switch (node.type) {
      case 'symlink':
        at = resolveLinkTarget(at, node.text);
        continue;
      case 'file':
        return { kind: 'file', path: at, executable: node.executable };
      case 'dir':
      case 'other':
        return { kind: 'not-file', path: at };
    }
  }
  return { kind: 'loop' };
}

export function factAt(host: Host, path: string): PathFact {
  const node = host.get(path);
  if (node === undefined) return { kind: 'missing' };
  switch (node.type) {
    case 'file':
      return { kind: 'file', uid: node.uid, executable: node.executable };
    case 'symlink':
      return { kind: 'symlink', uid: node.uid, text: node.text, resolved: resolveIn(host, path) };
    case 'dir':
      return { kind: 'directory', uid: node.uid };
    case 'other':
      return { kind: 'other', uid: node.uid };
  }
}

/** The facts the app would observe on `host` (no symlinked directories: canonical = raw). */
export function observe(layout: SlotLayout, host: Host): LayoutFacts {
  return {
    canonical: identity(layout),
    slotDir: factAt(host, layout.slotDir),
    entry: factAt(host, layout.entry),
    blue: factAt(host, layout.blue),
    green: factAt(host, layout.green),
    current: factAt(host, layout.current),
    lastGood: factAt(host, layout.lastGood),
    record: factAt(host, layout.record),
    state: factAt(host, layout.state),
    staleTemps: staleTempsIn(layout, host),
  };
}

/** Roles whose files are written by atomic replacement and may leave `.<name>.tmp-*` behind. */
export const ATOMICALLY_WRITTEN = [
  'entry',
  'blue',
  'green',
  'current',
  'lastGood',
  'recoveryScript',
  'record',
  'state',
] as const;

/** The temp entries next to layout files, sorted, as the app reports them. */
export function staleTempsIn(layout: SlotLayout, host: Host): string[] {
  const found = new Set<string>();
  for (const path of host.keys()) {
    for (const role of ATOMICALLY_WRITTEN) {
      if (
        dirnamePath(path) === dirnamePath(layout[role]) &&
        basenamePath(path).startsWith(tempPrefixFor(basenamePath(layout[role])))
      ) {
        found.add(path);
      }
    }
  }
  return [...found].sort();
}

/** A temp entry name an interrupted atomic write of `path` leaves behind. */
export function tempNextTo(path: string, suffix = '1234'): string {
  return joinPath(dirnamePath(path), `${tempPrefixFor(basenamePath(path))}${suffix}`);
}

export function factsOf(layout: SlotLayout, spec: HostSpec): LayoutFacts {
  return observe(layout, buildHost(layout, spec));
}

/** Content of the executable file `path` leads to, or `null` when it leads to none. */
export function runnableContent(host: Host, path: string): string | null {
  const resolved = resolveIn(host, path);
  if (resolved.kind !== 'file' || !resolved.executable) return null;
  const node = host.get(resolved.path);
  return node?.type === 'file' ? node.content : null;
}

/**
 * Applies one action as the file-system port would, strictly: a write inside the slot
 * directory needs the directory to exist, a seed needs an executable source, and a link may
 * not replace a directory (rename(2) cannot).
 */
export function applyAction(layout: SlotLayout, host: Host, action: LayoutAction): Host {
  const next = new Map(host);
  const requireParent = (path: string): void => {
    if (dirnamePath(path) === layout.slotDir && host.get(layout.slotDir)?.type !== 'dir') {
      throw new Error(`${action.kind}: ${path} written before ${layout.slotDir} exists`);
    }
  };
  switch (action.kind) {
    case 'create-slot-directory':
      if (host.has(action.path)) throw new Error(`create-slot-directory: ${action.path} already exists`);
      next.set(action.path, dir());
      return next;
    case 'seed-slot': {
      requireParent(action.target);
      const content = runnableContent(host, action.source);
      if (content === null) throw new Error(`seed-slot: ${action.source} is not runnable`);
      next.set(action.target, file(content, true));
      return next;
    }
    case 'point-link':
      requireParent(action.link);
      if (host.get(action.link)?.type === 'dir') throw new Error(`point-link: ${action.link} is a directory`);
      next.set(action.link, link(action.text));
      return next;
    case 'remove-stale-temp':
      if (!host.has(action.path)) throw new Error(`remove-stale-temp: ${action.path} does not exist`);
      next.delete(action.path);
      return next;
    case 'converge-service-assets':
      return next;
  }
}

export function applyActions(layout: SlotLayout, host: Host, actions: readonly LayoutAction[]): Host {
  return actions.reduce((state, action) => applyAction(layout, state, action), host);
}

// ---------------------------------------------------------------------------------------------
// Canonical paths through symlinked directories.

/**
 * Canonical paths when some directories are symlinks: `aliases` maps a directory to the real
 * directory it leads to. Each role keeps its last component and has its parent resolved, like
 * the app's `canonicalPath`.
 */
export function canonicalWith(layout: SlotLayout, aliases: Readonly<Record<string, string>>): CanonicalPaths {
  const resolveDir = (directory: string): string => {
    let at = directory;
    for (let step = 0; step < LINK_HOPS_MAX; step += 1) {
      const match = Object.keys(aliases)
        .filter((alias) => isPathInside(alias, at))
        .sort((a, b) => b.length - a.length)[0];
      if (match === undefined) return at;
      const target = aliases[match] ?? match;
      at = joinPath(target, at.slice(match.length));
    }
    throw new Error('alias loop');
  };
  const out = {} as Record<PathRole, string>;
  for (const role of PATH_ROLES)
    out[role] = joinPath(resolveDir(dirnamePath(layout[role])), basenamePath(layout[role]));
  return out;
}
