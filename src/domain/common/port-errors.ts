import type { ErrorCode } from './error-codes.js';

/**
 * Typed failures thrown by port implementations. They live with the domain (pure data, no I/O)
 * so that ports stay interfaces only; the app translates them to domain failures in one place
 * (src/app/common/translate-port-error.ts). Each has a `code` from its port's closed set and a `name`
 * of its own, given explicitly: a bundler may rename classes, and logs show the name.
 */
export abstract class PortError<Code extends string> extends Error {
  readonly code: Code;

  protected constructor(name: string, code: Code, message: string) {
    super(message);
    this.name = name;
    this.code = code;
  }
}

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
export class FileSystemError extends PortError<FileSystemErrorCode> {
  readonly path: string;
  readonly operation: string;

  constructor(code: FileSystemErrorCode, operation: string, path: string, detail?: string) {
    super('FileSystemError', code, `${operation} ${path}: ${code}${detail === undefined ? '' : ` (${detail})`}`);
    this.operation = operation;
    this.path = path;
  }
}

export type ServiceErrorCode = 'unit-not-found' | 'command-failed' | 'timeout' | 'not-supported';

/** Thrown by ServiceManager implementations. */
export class ServiceError extends PortError<ServiceErrorCode> {
  constructor(code: ServiceErrorCode, message: string) {
    super('ServiceError', code, message);
  }
}

export type ContainerErrorCode = 'invalid-machine' | 'symlink-refused' | 'too-large' | 'io' | 'not-supported';

/** Thrown by ContainerRootfs implementations. */
export class ContainerError extends PortError<ContainerErrorCode> {
  constructor(code: ContainerErrorCode, message: string) {
    super('ContainerError', code, message);
  }
}

/**
 * `permission`: the lock path cannot be opened or created for lack of permission (EACCES,
 * EPERM), which for a root-run tool means it was not run as root; `unavailable`: anything else
 * that makes the path unusable (a refused entry type, a missing flock(1)).
 */
export type LockErrorCode = 'unavailable' | 'permission' | 'timeout';

/** Thrown by HostLock implementations when the lock cannot be tried at all (busy is not an error). */
export class LockError extends PortError<LockErrorCode> {
  constructor(code: LockErrorCode, message: string) {
    super('LockError', code, message);
  }
}

/**
 * `unavailable`: no answer from the API server (unreachable, the connection broke off, no
 * usable cluster configuration); `refused`: it answered with an HTTP error status;
 * `unauthorized`: it kept refusing the credentials (401) although they were read again, so
 * waiting will not help (given explicitly, never derived from the status).
 */
export type ClusterErrorCode = 'unavailable' | 'refused' | 'unauthorized';

/**
 * Thrown by OperationStore implementations when the cluster cannot be reached or refuses;
 * `status` is the HTTP status of a refusal (`null` when there was no answer).
 */
export class ClusterError extends PortError<ClusterErrorCode> {
  readonly status: number | null;

  constructor(status: number | null, message: string, code?: ClusterErrorCode) {
    super('ClusterError', code ?? (status === null ? 'unavailable' : 'refused'), message);
    this.status = status;
  }
}

/**
 * Thrown by ArtifactSource implementations; `code` is the domain code to report. `httpStatus` is
 * the status of a refused answer (E_HTTP_STATUS), for callers to whom a 404 is an answer: a TUF
 * client reads "no newer root" from it.
 */
export class ArtifactError extends PortError<ErrorCode> {
  readonly httpStatus: number | null;

  constructor(code: ErrorCode, message: string, httpStatus: number | null = null) {
    super('ArtifactError', code, message);
    this.httpStatus = httpStatus;
  }
}

/**
 * Thrown by ReleaseTrust implementations: the repository's metadata cannot be trusted or fetched
 * (E_TRUST_METADATA), or a transport failure of the metadata requests (its own code, E_TIMEOUT say).
 */
export class TrustError extends PortError<ErrorCode> {
  constructor(code: ErrorCode, message: string) {
    super('TrustError', code, message);
  }
}
