import {
  OBSERVED_ROLES,
  tempPrefixFor,
  type LayoutFacts,
  type ObservedRole,
  type PathFact,
  type ResolvedFact,
} from '../../../domain/node/layout/host-facts.js';
import { basenamePath, dirnamePath, joinPath } from '../../../domain/node/layout/posix-path.js';
import {
  FILE_ROLES,
  PATH_ROLES,
  type CanonicalPaths,
  type PathRole,
  type SlotLayout,
} from '../../../domain/node/layout/slot-layout.js';
import type { EntryStat, FileSystem } from '../../../ports/node/file-system.js';

/** Directory depth bound for the canonical-path walk (I10: every loop is bounded). */
const ANCESTOR_STEPS_MAX = 256;

/** Reads every fact the layout decisions need. Read-only; safe at any time. */
export async function observeLayout(fs: FileSystem, layout: SlotLayout): Promise<LayoutFacts> {
  const canonical = await canonicalPaths(fs, layout);
  const observed = {} as Record<ObservedRole, PathFact>;
  for (const role of OBSERVED_ROLES) observed[role] = await observePath(fs, layout[role]);
  return { canonical, ...observed, staleTemps: await staleTemps(fs, layout) };
}

/** Roles whose files are written by atomic replacement, and so may leave a temp after a crash: all but the lock, which is never replaced. */
const ATOMICALLY_WRITTEN = FILE_ROLES.filter((role) => role !== 'lock');

/**
 * Temp entries an interrupted write left behind. The slot directory belongs to the upgrader,
 * so every dot-named `.tmp-` file or link in it is one (including the temps of private staging
 * files); elsewhere only the temps of the layout's own files are.
 */
async function staleTemps(fs: FileSystem, layout: SlotLayout): Promise<string[]> {
  const found = new Set<string>();
  const listings = new Map<string, readonly string[] | null>();
  const list = async (directory: string): Promise<readonly string[]> => {
    if (!listings.has(directory)) listings.set(directory, await listIfDirectory(fs, directory));
    return listings.get(directory) ?? [];
  };
  for (const name of await list(layout.slotDir)) {
    if (name.startsWith('.') && name.includes('.tmp-')) found.add(joinPath(layout.slotDir, name));
  }
  for (const role of ATOMICALLY_WRITTEN) {
    const directory = dirnamePath(layout[role]);
    const prefix = tempPrefixFor(basenamePath(layout[role]));
    for (const name of await list(directory)) {
      if (name.startsWith(prefix)) found.add(joinPath(directory, name));
    }
  }
  // A directory is never a temp an atomic write left (those are files and links): it is not
  // ours to sweep, and counting it would promise a repair that `remove` refuses.
  const temps: string[] = [];
  for (const path of [...found].sort()) {
    if ((await fs.lstat(path))?.kind !== 'directory') temps.push(path);
  }
  return temps;
}

async function listIfDirectory(fs: FileSystem, directory: string): Promise<readonly string[] | null> {
  const stat = await fs.lstat(directory);
  return stat?.kind === 'directory' ? fs.listDirectory(directory) : null;
}

export async function observePath(fs: FileSystem, path: string): Promise<PathFact> {
  const stat = await fs.lstat(path);
  if (stat === null) return { kind: 'missing' };
  switch (stat.kind) {
    case 'file':
      return { kind: 'file', uid: stat.uid, executable: isExecutable(stat) };
    case 'directory':
      return { kind: 'directory', uid: stat.uid };
    case 'other':
      return { kind: 'other', uid: stat.uid };
    case 'symlink': {
      const text = (await fs.readLink(path)) ?? '';
      return { kind: 'symlink', uid: stat.uid, text, resolved: await resolveFact(fs, path) };
    }
  }
}

async function resolveFact(fs: FileSystem, path: string): Promise<ResolvedFact> {
  const resolution = await fs.resolve(path);
  switch (resolution.kind) {
    case 'missing':
      return { kind: 'dangling' };
    case 'loop':
      return { kind: 'loop' };
    case 'resolved':
      return resolution.stat.kind === 'file'
        ? { kind: 'file', path: resolution.path, executable: isExecutable(resolution.stat) }
        : { kind: 'not-file', path: resolution.path };
  }
}

function isExecutable(stat: EntryStat): boolean {
  return (stat.mode & 0o111) !== 0;
}

async function canonicalPaths(fs: FileSystem, layout: SlotLayout): Promise<CanonicalPaths> {
  const out = {} as Record<PathRole, string>;
  for (const role of PATH_ROLES) out[role] = await canonicalPath(fs, layout[role]);
  return out;
}

/** The sandbox root with every symlink resolved (`/` stays `/`). */
export async function canonicalRoot(fs: FileSystem, layout: SlotLayout): Promise<string> {
  if (layout.root === '/') return '/';
  const resolution = await fs.resolve(layout.root);
  return resolution.kind === 'resolved' ? resolution.path : layout.root;
}

/**
 * The path with its parent directory resolved through symlinks and the last component kept,
 * so two roles that alias through a symlinked directory get the same canonical path. A missing
 * parent climbs to the nearest existing ancestor and re-appends the missing components.
 */
export async function canonicalPath(fs: FileSystem, path: string): Promise<string> {
  const missing: string[] = [basenamePath(path)];
  let directory = dirnamePath(path);
  for (let step = 0; step < ANCESTOR_STEPS_MAX; step += 1) {
    const resolution = await fs.resolve(directory);
    if (resolution.kind === 'resolved') return joinPath(resolution.path, ...missing.reverse());
    if (directory === '/') break;
    missing.push(basenamePath(directory));
    directory = dirnamePath(directory);
  }
  return path;
}
