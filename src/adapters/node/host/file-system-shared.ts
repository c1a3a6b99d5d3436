import { FileSystemError, type FileSystemErrorCode } from '../../../domain/common/port-errors.js';

/*
 * Helpers shared by the FileSystem adapters (node and memory), so both map errors, name limits
 * and walk paths the same way.
 */

/** Missing parents of a directory we create get the conventional mode; only the leaf gets the caller's. */
export const PARENT_DIRECTORY_MODE = 0o755;

const PASSED_THROUGH: ReadonlySet<string> = new Set<FileSystemErrorCode>([
  'ENOENT',
  'EEXIST',
  'ENOTDIR',
  'EISDIR',
  'EINVAL',
  'ELOOP',
  'EACCES',
  'EPERM',
  'ENOSPC',
  'EDQUOT',
  'EIO',
  'EROFS',
]);

/**
 * The one place errno codes become `FileSystemError` codes (memfs errors carry the same codes).
 * Errors without an errno code — programming errors, test harness errors, simulated crashes —
 * are returned unchanged so they surface as they are.
 */
export function asFileSystemError(error: unknown, operation: string, path: string): unknown {
  if (error instanceof FileSystemError) return error;
  const code = errnoCode(error);
  if (code === null) return error;
  const mapped = PASSED_THROUGH.has(code) ? (code as FileSystemErrorCode) : 'EOTHER';
  return new FileSystemError(mapped, operation, path, mapped === 'EOTHER' ? code : undefined);
}

export function errnoCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null || !('code' in error)) return null;
  const { code } = error;
  // errno names have no underscore; Node's own ERR_* codes (assertions, bad arguments) do.
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : null;
}

export function tooBigError(operation: string, path: string, maxBytes: number): FileSystemError {
  return new FileSystemError('ETOOBIG', operation, path, `more than ${maxBytes} bytes`);
}

/** `/a/b/c` → `/a`, `/a/b`, `/a/b/c`. */
export function componentsOf(path: string): string[] {
  const names = path.split('/').filter((name) => name !== '' && name !== '.');
  return names.map((_, index) => `/${names.slice(0, index + 1).join('/')}`);
}
