import { createHash } from 'node:crypto';
import { sha256FromHex, type Sha256 } from '../../../domain/common/digest.js';
import type { FileDigest } from '../../../ports/node/file-system.js';
import { isCleanAbsolutePath } from '../../../domain/node/layout/posix-path.js';

/** How a test describes an initial tree: absolute path → what is there. Parents are implied (0755). */
export type TreeNodeSpec =
  | { readonly file: string | Uint8Array; readonly mode?: number; readonly uid?: number }
  | { readonly symlink: string; readonly uid?: number }
  | { readonly directory: true; readonly mode?: number; readonly uid?: number }
  | { readonly fifo: true; readonly uid?: number };

export type TreeSpec = Readonly<Record<string, TreeNodeSpec>>;

/** One entry of a whole tree, parents listed before children (sorted by path). */
export type TreeEntry =
  | {
      readonly path: string;
      readonly kind: 'file';
      readonly data: Uint8Array;
      readonly mode: number;
      readonly uid: number;
    }
  | { readonly path: string; readonly kind: 'symlink'; readonly target: string; readonly uid: number }
  | { readonly path: string; readonly kind: 'directory'; readonly mode: number; readonly uid: number }
  | { readonly path: string; readonly kind: 'fifo'; readonly uid: number };

export type SnapshotEntry =
  | {
      readonly kind: 'file';
      readonly mode: number;
      readonly uid: number;
      readonly size: number;
      readonly sha256: Sha256;
    }
  | { readonly kind: 'symlink'; readonly uid: number; readonly target: string }
  | { readonly kind: 'directory'; readonly mode: number; readonly uid: number }
  | { readonly kind: 'fifo'; readonly uid: number };

/** The whole tree by path, keys in sorted order, so two snapshots compare with deep equality. */
export type Snapshot = Readonly<Record<string, SnapshotEntry>>;

export const DEFAULT_FILE_MODE = 0o644;
export const DEFAULT_DIRECTORY_MODE = 0o755;
/** A symlink's own permission bits, as Linux reports them. */
export const SYMLINK_MODE = 0o777;

export function entriesFromSpec(tree: TreeSpec, defaultUid: number): TreeEntry[] {
  return Object.keys(tree)
    .sort()
    .map((path): TreeEntry => {
      if (!isCleanAbsolutePath(path) || path === '/')
        throw new TypeError(`tree paths must be clean and absolute: ${path}`);
      const spec = tree[path];
      if (spec === undefined) throw new TypeError(`no spec for ${path}`);
      const uid = spec.uid ?? defaultUid;
      if ('file' in spec) {
        const data = typeof spec.file === 'string' ? new TextEncoder().encode(spec.file) : Uint8Array.from(spec.file);
        return { path, kind: 'file', data, mode: spec.mode ?? DEFAULT_FILE_MODE, uid };
      }
      if ('symlink' in spec) return { path, kind: 'symlink', target: spec.symlink, uid };
      if ('fifo' in spec) return { path, kind: 'fifo', uid };
      return { path, kind: 'directory', mode: spec.mode ?? DEFAULT_DIRECTORY_MODE, uid };
    });
}

export function sha256Of(data: Uint8Array): Sha256 {
  return sha256FromHex(createHash('sha256').update(data).digest('hex'));
}

export function digestOf(data: Uint8Array): FileDigest {
  return { sha256: sha256Of(data), bytes: data.length };
}

export function snapshotOf(entries: readonly TreeEntry[]): Snapshot {
  const snapshot: Record<string, SnapshotEntry> = {};
  for (const entry of [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    switch (entry.kind) {
      case 'file':
        snapshot[entry.path] = {
          kind: 'file',
          mode: entry.mode,
          uid: entry.uid,
          size: entry.data.length,
          sha256: sha256Of(entry.data),
        };
        break;
      case 'symlink':
        snapshot[entry.path] = { kind: 'symlink', uid: entry.uid, target: entry.target };
        break;
      case 'directory':
        snapshot[entry.path] = { kind: 'directory', mode: entry.mode, uid: entry.uid };
        break;
      case 'fifo':
        snapshot[entry.path] = { kind: 'fifo', uid: entry.uid };
        break;
    }
  }
  return snapshot;
}

export function childPath(directory: string, name: string): string {
  return directory === '/' ? `/${name}` : `${directory}/${name}`;
}
