import { readdirSync, readFileSync } from 'node:fs';

/** The fields of `/proc/<pid>/stat` that identify a process and its process group. */
export interface ProcStat {
  /** Field 3: R, S, D, Z (zombie), X (dead), ... */
  readonly state: string;
  /** Field 5. */
  readonly processGroup: number;
  /**
   * Field 22, clock ticks after boot at which the process was forked. It survives exec and never
   * changes, so PID plus start time names one process within a boot even after the PID is reused.
   */
  readonly startTime: number;
}

/** `/proc/<pid>/stat` of a process that exists (a zombie included), or null. */
export function readProcStat(pid: number, procRoot = '/proc'): ProcStat | null {
  let text: string;
  try {
    text = readFileSync(`${procRoot}/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 2 is the command in parentheses and may itself contain spaces and ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const processGroup = Number(fields[2]);
  const startTime = Number(fields[19]);
  if (state === undefined || !Number.isInteger(processGroup) || !Number.isInteger(startTime)) return null;
  return { state, processGroup, startTime };
}

/** Whether the process exists and is not a zombie waiting to be reaped (which nothing can stop). */
export function isLive(stat: ProcStat | null): stat is ProcStat {
  return stat !== null && stat.state !== 'Z' && stat.state !== 'X';
}

/** This boot's identity: start times only compare within one boot. Empty when the kernel hides it. */
export function bootId(procRoot = '/proc'): string {
  try {
    return readFileSync(`${procRoot}/sys/kernel/random/boot_id`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * The live members of process group `processGroup` forked at or after `notBeforeTicks`. A group
 * keeps its ID reserved while it has a member, and every process the recorded leader put in
 * its group was forked after it, so these are the leader's group and nothing older.
 */
export function liveGroupMembers(processGroup: number, notBeforeTicks: number, procRoot = '/proc'): number[] {
  let entries: string[];
  try {
    entries = readdirSync(procRoot);
  } catch {
    return [];
  }
  const members: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry), procRoot);
    if (isLive(stat) && stat.processGroup === processGroup && stat.startTime >= notBeforeTicks)
      members.push(Number(entry));
  }
  return members;
}
