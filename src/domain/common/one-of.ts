/** Whether `value` is one of `options`: a type guard, so no cast is needed before or after. */
export function isOneOf<T extends string>(options: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (options as readonly string[]).includes(value);
}
