import { createHash } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** A scratch directory for real-filesystem tests; `cleanup` removes it. */
export function makeScratch(prefix = 'agent-upgrade-test-'): { readonly root: string; cleanup(): void } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function writeExecutable(path: string, content: string, mode = 0o755): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
}

export function makeSymlink(path: string, target: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/**
 * Every entry under `root` with its kind, permission bits and content digest or link text, so
 * "nothing changed" is one equality check. Links are described, never followed. `/run` (the
 * lock file, whose content names the last holder) is outside the protected set and ignored.
 */
export function snapshotTree(root: string, ignore: readonly string[] = ['/run']): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (directory: string): void => {
    for (const name of readdirSync(directory).sort()) {
      const path = join(directory, name);
      const stat = lstatSync(path);
      const key = path.slice(root.length);
      if (ignore.includes(key)) continue;
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isSymbolicLink()) out[key] = `link ${readlinkSync(path)}`;
      else if (stat.isDirectory()) {
        out[key] = `dir ${mode}`;
        walk(path);
      } else if (stat.isFile())
        out[key] = `file ${mode} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
      else out[key] = `other ${mode}`;
    }
  };
  walk(root);
  return out;
}
