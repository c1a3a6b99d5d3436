/**
 * Where a health wait stands, for a caller that shows it (the CLI's transient line on a
 * terminal). Reported as the wait goes: at each poll of the service manager, after each probe
 * attempt, at each slice of the watch window. Figures only, never a verdict: the wait decides
 * as it would without an observer.
 */
export type HealthProgress =
  /**
   * The service manager's wait: how long one main process has run the expected binary without
   * interruption (0 while it does not, and again after a restart), out of `health.stableMs`.
   * `purpose` tells a candidate's gate from the wait after going back to a known-good binary
   * (health-gate.ts's GatePurpose, spelt out here so the two modules do not import each other).
   */
  | {
      readonly phase: 'stable';
      readonly purpose: 'candidate' | 'known-good';
      readonly stableMs: number;
      readonly neededMs: number;
    }
  /** The probe after a stable process: successes and failures in a row, out of their thresholds. */
  | {
      readonly phase: 'probe';
      readonly successes: number;
      readonly successesNeeded: number;
      readonly failures: number;
      readonly failuresAllowed: number;
    }
  /** The watch window (docs/protocol.md#watch-window): how much of it was watched healthy. */
  | { readonly phase: 'watch'; readonly watchedMs: number; readonly windowMs: number };

export type HealthObserver = (progress: HealthProgress) => void;

/**
 * Tells `observer`, if any. Whatever the observer does — a display whose stream broke — it must
 * not decide an upgrade: what it throws is dropped here, and the wait goes on as it would.
 */
export function tellHealth(observer: HealthObserver | undefined, progress: HealthProgress): void {
  if (observer === undefined) return;
  try {
    observer(progress);
  } catch {
    // A display failing is not the agent failing.
  }
}
