import type { ErrorCode } from './error-codes.js';

/** An expected failure: data with a stable code and a message that is safe to show anywhere. */
export interface Failure {
  readonly code: ErrorCode;
  readonly message: string;
  /** Set when the host had already changed when the failure happened (exit 5, not 1). */
  readonly hostChanged?: boolean;
}

export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: Failure };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function fail<T = never>(code: ErrorCode, message: string): Result<T> {
  return { ok: false, failure: { code, message } };
}

export function failure(code: ErrorCode, message: string): Failure {
  return { code, message };
}
