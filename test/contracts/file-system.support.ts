import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import { FileSystemError, type FileSystemErrorCode } from '../../src/domain/common/port-errors.js';
import type { FileSystem } from '../../src/ports/node/file-system.js';

/** What the FileSystem contract (file-system.contract.ts) and its parts share. */

export interface FileSystemFixture {
  readonly fs: FileSystem;
  /** An existing, empty, writable directory; every path the suite touches lies below it. */
  readonly root: string;
  cleanup(): Promise<void>;
  /** Creates a FIFO at `path`, for adapters that can hold special files (the real one). */
  makeFifo?(path: string): Promise<void>;
}

/** The fixture of the case that runs (the contract makes one per case). */
export type CurrentFixture = () => FileSystemFixture;

export const text = (value: string): Uint8Array => new TextEncoder().encode(value);
export const decode = (bytes: Uint8Array | null): string | null =>
  bytes === null ? null : new TextDecoder().decode(bytes);
export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export async function expectFailure(promise: Promise<unknown>, code: FileSystemErrorCode): Promise<void> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FileSystemError);
  expect((error as FileSystemError).code).toBe(code);
}

type Described = { kind: string; mode?: number; content?: string | null; link?: string | null };

/** The whole tree under `directory` as seen through the port: the state the assertions compare. */
export async function describeTree(fs: FileSystem, directory: string): Promise<Record<string, Described>> {
  const result: Record<string, Described> = {};
  for (const name of (await fs.listDirectory(directory)) ?? []) {
    const path = `${directory}/${name}`;
    const stat = await fs.lstat(path);
    if (stat === null) continue;
    if (stat.kind === 'symlink') result[path] = { kind: 'symlink', link: await fs.readLink(path) };
    else if (stat.kind === 'file')
      result[path] = { kind: 'file', mode: stat.mode, content: decode(await fs.readFile(path, 1 << 20)) };
    else if (stat.kind === 'directory') {
      result[path] = { kind: 'directory', mode: stat.mode };
      Object.assign(result, await describeTree(fs, path));
    } else result[path] = { kind: stat.kind };
  }
  return result;
}

/** Paths, writes and leftover temps relative to the root of the case that runs. */
export interface FixtureTools {
  at(relative: string): string;
  write(relative: string, content: string, mode?: number): Promise<void>;
  tempsIn(directory: string): Promise<string[]>;
}

export function toolsFor(current: CurrentFixture): FixtureTools {
  const at = (relative: string): string => `${current().root}/${relative}`;
  return {
    at,
    write: (relative, content, mode = 0o644) => current().fs.writeFileAtomic(at(relative), text(content), { mode }),
    tempsIn: async (directory) =>
      ((await current().fs.listDirectory(directory)) ?? []).filter((entry) => entry.includes('.tmp-')),
  };
}
