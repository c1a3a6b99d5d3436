/**
 * Time, as the app sees it: two clocks, because they answer different questions
 * (docs/protocol.md#the-two-clocks).
 *
 * - `nowMs` is the wall clock. NTP, a VM resume or an operator's `date -s` step it either way at
 *   any moment, so it only stamps what people and other machines read: status and record
 *   timestamps, the lock holder's "since", times written to the cluster, and comparisons with
 *   times other machines wrote (a lease's renew time, a credential's expiry, a rollout window).
 * - `monotonicMs` never steps: every duration, deadline and interval this process measures —
 *   health stability and timeout, lock waits, retries, start limits, cache ages — is a difference
 *   of two of its readings. Its origin is arbitrary and means nothing across processes.
 *
 * `sleep` waits a duration, so it runs on the monotonic clock. The memory clock advances both on
 * `sleep` and can step the wall clock alone, so simulations never wait and can prove that no
 * verdict depends on the wall clock.
 */
export interface Clock {
  /** Wall-clock milliseconds since the epoch: for stamps, never for durations. */
  nowMs(): number;
  /** Milliseconds from an arbitrary origin that never go back: for every duration and deadline. */
  monotonicMs(): number;
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}
