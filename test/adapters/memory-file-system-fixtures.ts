import { MemoryFileSystem } from '../../src/adapters/node/memory/memory-file-system.js';

export const text = (value: string): Uint8Array => new TextEncoder().encode(value);
export const OLD = 'old binary, version 1';
export const NEW = 'new binary, version 2 (longer)';

export async function contentOf(fs: MemoryFileSystem, path: string): Promise<string | null> {
  const bytes = await fs.readFile(path, 1 << 20);
  return bytes === null ? null : new TextDecoder().decode(bytes);
}

export const withBinary = (): MemoryFileSystem => MemoryFileSystem.fromTree({ '/d/a': { file: OLD, mode: 0o644 } });
