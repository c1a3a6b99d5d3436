import type { ErrorCode } from './error-codes.js';

/**
 * Typed failures thrown by port implementations. They live with the domain (pure data, no I/O)
 * so that ports stay interfaces only; the app translates them to domain failures in one place
 * (src/app/translate-port-error.ts).
 */
export type FileSystemErrorCode =
  | 'ENOENT'
  | 'EEXIST'
  | 'ENOTDIR'
  | 'EISDIR'
  | 'EINVAL'
  | 'ELOOP'
  | 'EACCES'
  | 'EPERM'
  | 'ENOSPC'
  | 'EDQUOT'
  | 'EIO'
  | 'EROFS'
  | 'ETOOBIG'
  /** Not a regular file (a FIFO, a device, a socket) where one was required: never opened for data. */
  | 'ENOTREG'
  /** The file's content is not the digest the caller expected (moveFileAtomic). */
  | 'ECHANGED'
  /** A rename across filesystems (moveFileAtomic): nothing moved, a copy is needed. */
  | 'EXDEV'
  | 'EOTHER';

/** The one error type FileSystem implementations throw for operating failures. */
export class FileSystemError extends Error {
  readonly code: FileSystemErrorCode;
  readonly path: string;
  readonly operation: string;

  constructor(code: FileSystemErrorCode, operation: string, path: string, detail?: string) {
    super(`${operation} ${path}: ${code}${detail === undefined ? '' : ` (${detail})`}`);
    this.name = 'FileSystemError';
    this.code = code;
    this.operation = operation;
    this.path = path;
  }
}

export function isFileSystemError(error: unknown): error is FileSystemError {
  return error instanceof FileSystemError;
}

export type ServiceErrorCode = 'unit-not-found' | 'command-failed' | 'timeout' | 'not-supported';

/** Thrown by ServiceManager implementations. */
export class ServiceError extends Error {
  readonly code: ServiceErrorCode;

  constructor(code: ServiceErrorCode, message: string) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
  }
}

export type ContainerErrorCode = 'invalid-machine' | 'symlink-refused' | 'too-large' | 'io' | 'not-supported';

/** Thrown by ContainerRootfs implementations. */
export class ContainerError extends Error {
  readonly code: ContainerErrorCode;

  constructor(code: ContainerErrorCode, message: string) {
    super(message);
    this.name = 'ContainerError';
    this.code = code;
  }
}

/**
 * `permission`: the lock path cannot be opened or created for lack of permission (EACCES,
 * EPERM), which for a root-run tool means it was not run as root; `unavailable`: anything else
 * that makes the path unusable (a refused entry type, a missing flock(1)).
 */
export type LockErrorCode = 'unavailable' | 'permission' | 'timeout';

/** Thrown by HostLock implementations when the lock cannot be tried at all (busy is not an error). */
export class LockError extends Error {
  readonly code: LockErrorCode;

  constructor(code: LockErrorCode, message: string) {
    super(message);
    this.name = 'LockError';
    this.code = code;
  }
}

/** Thrown by OperationStore implementations when the cluster cannot be reached or refuses. */
export class ClusterError extends Error {
  readonly status: number | null;

  constructor(status: number | null, message: string) {
    super(message);
    this.name = 'ClusterError';
    this.status = status;
  }
}

/** Thrown by ArtifactSource implementations; `code` is the domain code to report. */
export class ArtifactError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'ArtifactError';
    this.code = code;
  }
}
