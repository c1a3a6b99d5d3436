/** Resolves to what a promise rejected with, or null when it fulfilled. */
export async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}
