import { ClusterError } from '../../../domain/common/port-errors.js';

/**
 * No credentials to send: the token file cannot be read, the exec plugin failed or printed
 * nothing usable, the client certificate files cannot be loaded. It is a ClusterError like any
 * other (there was no answer, `status` is null), and it counts towards the bounded failure on
 * invalid credentials just as a 401 does: either way this machine cannot authenticate.
 */
export class CredentialError extends ClusterError {
  constructor(message: string) {
    super(null, message);
  }
}

/** A 401, or no credentials to send at all. */
export function isAuthenticationFailure(error: unknown): boolean {
  return error instanceof CredentialError || (error instanceof ClusterError && error.status === 401);
}
