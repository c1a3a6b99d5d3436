import { readdirSync, readlinkSync } from 'node:fs';

/** The PIDs of live processes whose executable is `path` (zombies have none). */
export function runningFrom(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/exe`) === path) pids.push(Number(entry));
    } catch {
      // Gone, a zombie, or a kernel thread.
    }
  }
  return pids;
}
