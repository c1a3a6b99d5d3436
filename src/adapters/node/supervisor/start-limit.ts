/**
 * systemd's StartLimitBurst/StartLimitIntervalSec: at most `burst` starts within any
 * `intervalMs`. A sliding window (systemd uses a window fixed at its first start), so the rule
 * reads exactly as configured: a start that would make more than `burst` in the last
 * `intervalMs` is refused. An interval of 0 disables the limit, as in systemd.
 */
export class StartLimit {
  private starts: number[] = [];

  constructor(
    private readonly burst: number,
    private readonly intervalMs: number,
  ) {}

  /** Records a start at `nowMs` (a monotonic reading: the limit counts a duration) and returns true, or refuses it. */
  tryStart(nowMs: number): boolean {
    if (this.intervalMs === 0) return true;
    // Monotonic readings never go back; a start "after now" could only come from a caller mixing
    // clocks, and is forgotten rather than counted forever.
    this.starts = this.starts.filter((startMs) => startMs <= nowMs && nowMs - startMs < this.intervalMs);
    if (this.starts.length >= this.burst) return false;
    this.starts.push(nowMs);
    return true;
  }

  /** `reset-failed`: forget the counted starts. */
  reset(): void {
    this.starts = [];
  }
}
