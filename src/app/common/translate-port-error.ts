import type { ErrorCode } from '../../domain/common/error-codes.js';
import { failure, type Failure } from '../../domain/common/failure.js';
import {
  ArtifactError,
  ClusterError,
  ContainerError,
  FileSystemError,
  LockError,
  PortError,
  ServiceError,
  TrustError,
  type ContainerErrorCode,
  type FileSystemErrorCode,
} from '../../domain/common/port-errors.js';
import { redactUrlsInText } from '../../domain/common/redacted-url.js';

/**
 * The one place typed port errors become domain failures. Returns `null` for anything that is
 * not a port error, which the caller must let propagate. Every message is redacted: an adapter
 * may quote a URL (a download, the API server) with a credential in it.
 */
export function translatePortError(error: unknown): Failure | null {
  if (!(error instanceof PortError)) return null;
  const message = redactUrlsInText(error.message);
  if (error instanceof FileSystemError) return fileSystemFailure(error.code, message);
  if (error instanceof ContainerError) return failure(CONTAINER_CODES[error.code], message);
  if (error instanceof ServiceError) return failure(error.code === 'not-supported' ? 'E_CONFIG' : 'E_SERVICE', message);
  if (error instanceof LockError) return failure(error.code === 'permission' ? 'E_NOT_ROOT' : 'E_IO', message);
  if (error instanceof ArtifactError || error instanceof TrustError) return failure(error.code, message);
  if (error instanceof ClusterError)
    return failure(error.code === 'unauthorized' ? 'E_CLUSTER_AUTH' : 'E_CLUSTER', message);
  // A port error added without a translation here is a bug: it propagates like any other.
  return null;
}

function fileSystemFailure(code: FileSystemErrorCode, message: string): Failure {
  switch (code) {
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

const CONTAINER_CODES: Readonly<Record<ContainerErrorCode, ErrorCode>> = {
  'not-supported': 'E_CONFIG',
  'too-large': 'E_TOO_LARGE',
  io: 'E_IO',
  'invalid-machine': 'E_LAYOUT',
  'symlink-refused': 'E_LAYOUT',
};
