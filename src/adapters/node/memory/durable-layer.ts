import { childPath, type TreeEntry } from './memory-tree.js';

/**
 * A directory entry as a directory fsync captured it. Files refer to their inode (memfs `ino`,
 * stable across rename), so the content that survives is whatever that inode last fsynced;
 * symlink text and a directory's mode travel with the entry itself.
 */
export type DurableEntry =
  | { readonly kind: 'file'; readonly ino: number }
  | { readonly kind: 'symlink'; readonly ino: number; readonly target: string }
  | { readonly kind: 'directory'; readonly ino: number; readonly mode: number }
  | { readonly kind: 'fifo'; readonly ino: number };

interface DurableData {
  readonly data: Uint8Array;
  readonly mode: number;
}

/** What a fresh file whose data never reached the disk looks like after power loss. */
const UNSYNCED_FILE: DurableData = { data: new Uint8Array(0), mode: 0o600 };

/**
 * The durable layer of the model (LazyFS's idea): a directory's entries are durable as of its
 * last fsync, a file's content and mode as of its last fsync. Everything else is lost at
 * power loss. Directories are keyed by real path: the port never renames or removes one.
 */
export class DurableLayer {
  private readonly directories = new Map<string, ReadonlyMap<string, DurableEntry>>();
  // Never pruned: an unlinked inode may still be named by a stale durable entry.
  private readonly files = new Map<number, DurableData>();

  syncFile(ino: number, data: Uint8Array, mode: number): void {
    this.files.set(ino, { data: Uint8Array.from(data), mode });
  }

  syncDirectory(realPath: string, entries: ReadonlyMap<string, DurableEntry>): void {
    this.directories.set(realPath, new Map(entries));
  }

  /** The tree a machine would find after power loss now; `uidOf` supplies owners (not modelled). */
  survivors(uidOf: (ino: number) => number): TreeEntry[] {
    const entries: TreeEntry[] = [];
    const walk = (directory: string): void => {
      const listing = this.directories.get(directory) ?? new Map<string, DurableEntry>();
      for (const name of [...listing.keys()].sort()) {
        const entry = listing.get(name);
        if (entry === undefined) continue;
        const path = childPath(directory, name);
        const uid = uidOf(entry.ino);
        switch (entry.kind) {
          case 'file': {
            const { data, mode } = this.files.get(entry.ino) ?? UNSYNCED_FILE;
            entries.push({ path, kind: 'file', data, mode, uid });
            break;
          }
          case 'symlink':
            entries.push({ path, kind: 'symlink', target: entry.target, uid });
            break;
          case 'directory':
            entries.push({ path, kind: 'directory', mode: entry.mode, uid });
            walk(path);
            break;
          case 'fifo':
            entries.push({ path, kind: 'fifo', uid });
            break;
        }
      }
    };
    walk('/');
    return entries;
  }
}
