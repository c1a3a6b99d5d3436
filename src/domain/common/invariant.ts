/**
 * Programmer errors. These are never caught below the CLI's top level: an invariant that does
 * not hold means the code is wrong, and continuing could damage the host.
 */
export class InvariantViolation extends Error {
  constructor(message: string) {
    super(`invariant violated: ${message}`);
    this.name = 'InvariantViolation';
  }
}

export function invariant(condition: unknown, message: string): asserts condition {
  if (!condition) throw new InvariantViolation(message);
}
