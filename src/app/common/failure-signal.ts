import type { Failure, Result } from '../../domain/common/failure.js';
import { translatePortError } from './translate-port-error.js';

/**
 * Carries an expected failure up through the app's async code. It never escapes a use case:
 * `runUseCase` turns it (and any typed port error) back into a `Result`.
 */
export class FailureSignal extends Error {
  readonly failure: Failure;

  constructor(failure: Failure) {
    super(failure.message);
    this.name = 'FailureSignal';
    this.failure = failure;
  }
}

export function raise(failure: Failure): never {
  throw new FailureSignal(failure);
}

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) raise(result.failure);
  return result.value;
}

/**
 * Runs a use case body: expected failures and port errors become a failed `Result`; anything
 * else (an invariant violation, a simulated crash) propagates, because it is not an outcome.
 */
export async function runUseCase<T>(body: () => Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await body() };
  } catch (error) {
    return { ok: false, failure: asFailure(error) };
  }
}

/** An expected failure or a typed port error as data; anything else is not an outcome and propagates. */
export function asFailure(error: unknown): Failure {
  if (error instanceof FailureSignal) return error.failure;
  const translated = translatePortError(error);
  if (translated !== null) return translated;
  throw error;
}
