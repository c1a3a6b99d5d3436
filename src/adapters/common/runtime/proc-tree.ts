import { readdirSync, readFileSync } from 'node:fs';

interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  readonly session: number;
  /** Start time in clock ticks since boot: a pid with another start time is another process. */
  readonly start: string;
}

/**
 * The fallback where no cgroup can be made: the processes of a run, found in /proc while it
 * runs — descendants by parent chains, and members of the session and process group the run
 * started (a pid is never reused while it names a group or session). A descendant that left
 * the session and was reparented before it was first seen is out of reach; only a cgroup
 * contains that.
 */
export class DescendantTracker {
  private readonly known = new Map<number, string>();
  private rootStart: string | null = null;

  constructor(private readonly rootPid: number) {}

  /** Adds every process of the run visible now. */
  scan(): void {
    const table = readProcTable();
    const current = new Map(table.map((entry) => [entry.pid, entry.start]));
    this.rootStart ??= current.get(this.rootPid) ?? null;
    const ours = (pid: number): boolean => this.known.has(pid) && this.known.get(pid) === current.get(pid);
    for (let grew = true; grew;) {
      grew = false;
      for (const entry of table) {
        if (ours(entry.pid)) continue;
        const isRoot = entry.pid === this.rootPid && entry.start === this.rootStart;
        if (isRoot || entry.pgrp === this.rootPid || entry.session === this.rootPid || ours(entry.ppid)) {
          this.known.set(entry.pid, entry.start);
          grew = true;
        }
      }
    }
  }

  /** Scans once more and SIGKILLs every process of the run that is still the one seen. */
  killAll(): void {
    this.scan();
    for (const [pid, start] of this.known) {
      if (pid <= 1 || pid === process.pid || readEntry(String(pid))?.start !== start) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}

/** The PIDs /proc lists now (empty when it cannot be read). */
export function procPids(): string[] {
  try {
    return readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
}

function readProcTable(): ProcEntry[] {
  const table: ProcEntry[] = [];
  for (const name of procPids()) {
    const entry = readEntry(name);
    if (entry !== null) table.push(entry);
  }
  return table;
}

/** Fields of /proc/PID/stat after the command name, which may itself hold spaces and parentheses. */
function readEntry(pid: string): ProcEntry | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return null;
  }
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime
  // cstime priority nice num_threads itrealvalue starttime
  const [ppid, pgrp, session, start] = [fields[1], fields[2], fields[3], fields[19]];
  if (ppid === undefined || pgrp === undefined || session === undefined || start === undefined) return null;
  return { pid: Number(pid), ppid: Number(ppid), pgrp: Number(pgrp), session: Number(session), start };
}
