interface Step<T> {
  readonly index: number;
  readonly result?: IteratorResult<T>;
  readonly error?: unknown;
}

/**
 * The items of every source as they come; it ends when all have ended, and the first error of
 * any ends it. Sources still running then are asked to return; they must also watch an abort
 * signal their owner aborts, because a source waiting on I/O handles that request only when its
 * wait is over.
 */
export async function* mergeStreams<T>(sources: readonly AsyncGenerator<T>[]): AsyncGenerator<T> {
  const pull = (index: number): Promise<Step<T>> =>
    (sources[index] as AsyncGenerator<T>).next().then(
      (result) => ({ index, result }),
      (error: unknown) => ({ index, error: error ?? new Error('a stream failed') }),
    );
  const pending = new Map<number, Promise<Step<T>>>(sources.map((_, index) => [index, pull(index)]));
  try {
    while (pending.size > 0) {
      const step = await Promise.race(pending.values());
      if (step.error !== undefined) throw step.error;
      if (step.result?.done !== false) {
        pending.delete(step.index);
        continue;
      }
      pending.set(step.index, pull(step.index));
      yield step.result.value;
    }
  } finally {
    for (const index of pending.keys()) (sources[index] as AsyncGenerator<T>).return(undefined).catch(() => undefined);
  }
}
