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

  /** Records a start at `nowMs` and returns true, or refuses it. */
  tryStart(nowMs: number): boolean {
    if (this.intervalMs === 0) return true;
    // A start "after now" means the wall clock was set back: it is forgotten, as one long past
    // would be after a jump forward, so that no clock step keeps the agent failed for longer.
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
