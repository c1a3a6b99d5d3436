/** Far enough apart to cost nothing; only the timer's existence matters. */
const WAKE_INTERVAL_MS = 3_600_000;

/**
 * Keeps the process alive until `release`: pending promises and signal listeners do not hold
 * Node's event loop open, so a daemon that only waits (no cluster to watch) would otherwise exit.
 */
export function holdEventLoop(): { release(): void } {
  const timer = setInterval(() => undefined, WAKE_INTERVAL_MS);
  return { release: () => clearInterval(timer) };
}
