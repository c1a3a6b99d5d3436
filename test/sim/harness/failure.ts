import type { Trace } from './trace.js';

/**
 * An invariant checker: reads a view of the simulated world and returns the problems it finds,
 * none when the invariant holds. Checkers never change the world, so a simulation can run them
 * after every step.
 */
export type Checker<View> = (view: View) => readonly string[];

/** Every problem the checkers find in `view`, in checker order. */
export function problemsOf<View>(view: View, checkers: readonly Checker<View>[]): string[] {
  return checkers.flatMap((check) => [...check(view)]);
}

/** A broken invariant or a run that did not settle: the problems, then the run's trace. */
export class SimFailure extends Error {
  override name = 'SimFailure';

  constructor(
    readonly problems: readonly string[],
    trace: Trace,
  ) {
    super(`${problems.join('; ')}\n${trace.format()}`);
  }
}
