import type { ErrorCode } from '../domain/error-codes.js';
import { failure, type Failure } from '../domain/failure.js';
import {
  ArtifactError,
  ClusterError,
  ContainerError,
  FileSystemError,
  LockError,
  ServiceError,
} from '../domain/port-errors.js';
import { redactUrlsInText } from '../domain/redacted-url.js';

/**
 * The one place typed port errors become domain failures. Returns `null` for anything that is
 * not a port error, which the caller must let propagate.
 */
export function translatePortError(error: unknown): Failure | null {
  if (error instanceof FileSystemError) {
    const message = redactUrlsInText(error.message);
    switch (error.code) {
      case 'ENOSPC':
      case 'EDQUOT':
        return failure('E_DISK_SPACE', `not enough disk space: ${message}`);
      case 'EACCES':
      case 'EPERM':
        return failure('E_NOT_ROOT', `permission denied: ${message}`);
      case 'ENOTDIR':
      case 'EISDIR':
      case 'ELOOP':
      case 'ENOTREG':
        return failure('E_LAYOUT', `unexpected entry type: ${message}`);
      case 'ETOOBIG':
        return failure('E_TOO_LARGE', `file too large: ${message}`);
      case 'ECHANGED':
        return failure('E_DIGEST_MISMATCH', `file content changed: ${message}`);
      default:
        return failure('E_IO', `filesystem error: ${message}`);
    }
  }
  if (error instanceof ServiceError)
    return failure(error.code === 'not-supported' ? 'E_CONFIG' : 'E_SERVICE', redactUrlsInText(error.message));
  if (error instanceof ContainerError) return failure(containerCode(error), redactUrlsInText(error.message));
  if (error instanceof ClusterError) return failure('E_CLUSTER', redactUrlsInText(error.message));
  if (error instanceof LockError) return failure(error.code === 'permission' ? 'E_NOT_ROOT' : 'E_IO', error.message);
  if (error instanceof ArtifactError) return failure(error.code, redactUrlsInText(error.message));
  return null;
}

function containerCode(error: ContainerError): ErrorCode {
  switch (error.code) {
    case 'not-supported':
      return 'E_CONFIG';
    case 'too-large':
      return 'E_TOO_LARGE';
    case 'io':
      return 'E_IO';
    case 'invalid-machine':
    case 'symlink-refused':
      return 'E_LAYOUT';
  }
}
