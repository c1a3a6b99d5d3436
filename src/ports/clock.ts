/** Time, as the app sees it. The memory clock advances on `sleep`, so simulations never wait. */
export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
