import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readlinkSync,
  readSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { bootId, isLive, readProcStat } from './proc-stat.js';

/**
 * Which process the supervisor last started as the agent, kept in a file next to the control
 * socket. A supervisor killed by SIGKILL cannot stop its agent; the parent-death signal
 * (death-signal.ts) normally takes it down too, but it is not set for an instant after fork,
 * applies to the main process only (not what it forked), and needs util-linux. The record covers
 * all of that: the next supervisor stops what it names before starting its own agent
 * (orphan.ts), and the ServiceManager client reports an agent that outlived its supervisor
 * instead of calling the service absent.
 *
 * Identity is boot ID + PID + start time: the PID alone may be reused, the start time only
 * compares within one boot. The executable is recorded for operators only: a slot rewritten
 * under a running agent reads as "<path> (deleted)", so comparing it would spare a real orphan.
 */
export interface AgentRecord {
  readonly bootId: string;
  readonly pid: number;
  /** /proc/<pid>/stat field 22 (clock ticks after boot). */
  readonly startTime: number;
  readonly executable: string | null;
}

/** A record is a few dozen bytes; anything longer was not written by a supervisor. */
const RECORD_MAX_BYTES = 4096;

/** Derived from the socket path, so the supervisor and every client agree on it without configuration. */
export function agentRecordPath(controlSocket: string): string {
  return `${controlSocket}.agent.json`;
}

/** The record for running process `pid`, or null when it is already gone. */
export function describeProcess(pid: number, procRoot = '/proc'): AgentRecord | null {
  const stat = readProcStat(pid, procRoot);
  if (!isLive(stat)) return null;
  let executable: string | null;
  try {
    executable = readlinkSync(`${procRoot}/${pid}/exe`);
  } catch {
    executable = null;
  }
  return { bootId: bootId(procRoot), pid, startTime: stat.startTime, executable };
}

/**
 * Replaces the record atomically (a temp file renamed over it), so a reader never sees half of
 * one. Not fsynced: it only matters while processes live, and none survive a power loss.
 */
export function writeAgentRecord(path: string, record: AgentRecord): void {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    unlinkSync(temp);
  } catch {
    // No leftover from an earlier supervisor that had this PID.
  }
  writeFileSync(temp, `${JSON.stringify(record)}\n`, { mode: 0o644, flag: 'wx' });
  renameSync(temp, path);
}

/**
 * The record, or null when there is none or it cannot be trusted: a link, not a regular file,
 * owned by another user (whoever could plant it could have us signal any process group), or
 * not a record's shape.
 */
export function readAgentRecord(path: string): AgentRecord | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return null;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.uid !== process.geteuid?.() || stat.size > RECORD_MAX_BYTES) return null;
    const buffer = Buffer.alloc(RECORD_MAX_BYTES);
    const length = readSync(fd, buffer, 0, RECORD_MAX_BYTES, 0);
    return parseRecord(buffer.subarray(0, length).toString('utf8'));
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/** Removes the record if it still names `pid`: it must never outlive the agent it describes. */
export function removeAgentRecord(path: string, pid: number): void {
  if (readAgentRecord(path)?.pid !== pid) return;
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

/** The recorded agent's PID when that very process still runs (not a zombie); null otherwise. */
export function liveRecordedAgent(record: AgentRecord | null, procRoot = '/proc'): number | null {
  if (record === null || record.bootId !== bootId(procRoot)) return null;
  const stat = readProcStat(record.pid, procRoot);
  return isLive(stat) && stat.startTime === record.startTime ? record.pid : null;
}

function parseRecord(text: string): AgentRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const { bootId: boot, pid, startTime, executable } = value as Record<string, unknown>;
  if (typeof boot !== 'string' || !isCount(pid) || pid < 1 || !isCount(startTime)) return null;
  if (executable !== null && typeof executable !== 'string') return null;
  return { bootId: boot, pid, startTime, executable };
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
