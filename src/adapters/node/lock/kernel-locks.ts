import { readFile } from 'node:fs/promises';

/** What the kernel says about the flock on one inode. */
export type KernelFlock =
  | { readonly held: false }
  /** `pid` is the process that took the flock; null when it is not visible from this pid namespace. */
  | { readonly held: true; readonly pid: number | null };

/**
 * Reads /proc/locks for an FLOCK on the inode (device and inode number, as fstat gave them).
 * Waiters (lines with "->") are not holders. Throws when /proc/locks cannot be read.
 */
export async function kernelFlock(device: bigint, inode: bigint, procLocksPath = '/proc/locks'): Promise<KernelFlock> {
  const text = await readFile(procLocksPath, 'utf8');
  const wanted = `${hex(major(device))}:${hex(minor(device))}:${inode.toString()}`;
  for (const line of text.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields[1] !== 'FLOCK' || fields[5] === undefined || normalise(fields[5]) !== wanted) continue;
    const pid = Number(fields[4]);
    return { held: true, pid: Number.isSafeInteger(pid) && pid > 0 ? pid : null };
  }
  return { held: false };
}

/**
 * The start time of a process in clock ticks since boot, or null when it is gone. A pid with the
 * same start time is the same process, so a recycled pid is never mistaken for the one recorded.
 */
export async function processStartTicks(pid: number): Promise<string | null> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (text === null) return null;
  // The command name is parenthesised and may itself contain spaces and parentheses.
  const after = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Field 22 of proc_pid_stat(5); the text after the name starts at field 3.
  return after[22 - 3] ?? null;
}

// The glibc dev_t encoding, which is what Node's stat reports.
function major(device: bigint): bigint {
  return ((device >> 8n) & 0xfffn) | ((device >> 32n) & ~0xfffn);
}

function minor(device: bigint): bigint {
  return (device & 0xffn) | ((device >> 12n) & ~0xffn);
}

function hex(value: bigint): string {
  return value.toString(16).padStart(2, '0');
}

function normalise(field: string): string | null {
  const parts = /^([0-9a-f]+):([0-9a-f]+):([0-9]+)$/i.exec(field);
  if (parts === null) return null;
  return `${hex(BigInt(`0x${parts[1] ?? ''}`))}:${hex(BigInt(`0x${parts[2] ?? ''}`))}:${parts[3] ?? ''}`;
}
