export type SupervisorErrorCode =
  /** Another supervisor answers on the control socket: starting a second one would run two agents. */
  | 'already-running'
  /** The control socket path holds something that is not a socket; it is never deleted. */
  | 'socket-path-occupied'
  /** The control socket could not be created (missing permission, path too long, ...). */
  | 'socket-failed'
  /** `start()` was called twice, or after `close()`. */
  | 'invalid-state'
  | 'invalid-options';

/** Thrown by the supervisor itself (not by the ServiceManager client, which throws ServiceError). */
export class SupervisorError extends Error {
  readonly code: SupervisorErrorCode;

  constructor(code: SupervisorErrorCode, message: string) {
    super(message);
    this.name = 'SupervisorError';
    this.code = code;
  }
}
