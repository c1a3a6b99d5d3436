import { ContainerError } from '../../../domain/common/port-errors.js';
import { errnoCode } from '../host/file-system-shared.js';

/**
 * The one place operating-system failures become `ContainerError`s, since the port promises
 * nothing else. ELOOP can only come from an O_NOFOLLOW open meeting a symlink, so it is a
 * refused symlink. Errors without an errno code (programming errors) pass through unchanged.
 */
export function asContainerError(error: unknown, operation: string): unknown {
  if (error instanceof ContainerError) return error;
  const code = errnoCode(error);
  if (code === null) return error;
  if (code === 'ELOOP')
    return new ContainerError('symlink-refused', `${operation}: a symlink inside the rootfs was refused (ELOOP)`);
  return new ContainerError('io', `${operation} failed: ${code}`);
}

/** Runs `body`, translating its failures for `operation`. */
export async function translated<T>(operation: string, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw asContainerError(error, operation);
  }
}
