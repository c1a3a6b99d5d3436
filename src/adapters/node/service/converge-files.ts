import type { FileSystem } from '../../../ports/node/file-system.js';

/** A file a service platform owns: its full text and mode. */
export interface OwnedFile {
  readonly path: string;
  readonly text: string;
  readonly mode: number;
}

const OWNED_FILE_MAX_BYTES = 1024 * 1024;

/** Whether every file holds exactly its text with its mode. Reads only. */
export async function filesCurrent(fs: FileSystem, files: readonly OwnedFile[]): Promise<boolean> {
  for (const file of files) if (!(await fileCurrent(fs, file))) return false;
  return true;
}

/** Rewrites, each atomically, the files that differ; returns whether any did. */
export async function convergeFiles(fs: FileSystem, files: readonly OwnedFile[]): Promise<boolean> {
  let changed = false;
  for (const file of files) {
    if (await fileCurrent(fs, file)) continue;
    await fs.writeFileAtomic(file.path, new TextEncoder().encode(file.text), { mode: file.mode });
    changed = true;
  }
  return changed;
}

async function fileCurrent(fs: FileSystem, file: OwnedFile): Promise<boolean> {
  const stat = await fs.lstat(file.path);
  if (stat === null || stat.kind !== 'file' || stat.mode !== file.mode || stat.size > OWNED_FILE_MAX_BYTES)
    return false;
  const bytes = await fs.readFile(file.path, OWNED_FILE_MAX_BYTES);
  return bytes !== null && new TextDecoder().decode(bytes) === file.text;
}
