import { fstatSync } from 'node:fs';
import { symbols, type DestinationStream } from 'pino';

/**
 * Log lines for the systemd journal. A service's stderr is connected to journald, which then
 * sets JOURNAL_STREAM to "<device>:<inode>" of that stream; journald reads a `<N>` at the start
 * of a line as its syslog priority (sd-daemon(3), on by default through `SyslogLevelPrefix=`).
 * Without it every line is stored at the unit's default priority (info) and
 * `journalctl -p warning` cannot tell a warning from an info line.
 */

/** pino's numeric level → syslog priority: fatal → crit, error → err, warn → warning, info → info, debug and trace → debug. */
export function syslogPriorityOf(level: number): number {
  if (level >= 60) return 2;
  if (level >= 50) return 3;
  if (level >= 40) return 4;
  if (level >= 30) return 6;
  return 7;
}

/**
 * Whether descriptor `fd` is the stream journald handed this process. Comparing device and
 * inode, not just the variable's presence, matters: a child inherits JOURNAL_STREAM even when
 * its stderr was redirected elsewhere (a pipe, a file, a terminal).
 */
export function isJournalStream(fd: number, env: NodeJS.ProcessEnv = process.env): boolean {
  const match = /^(\d+):(\d+)$/.exec(env['JOURNAL_STREAM'] ?? '');
  if (match === null) return false;
  try {
    const stat = fstatSync(fd, { bigint: true });
    return stat.dev === BigInt(match[1] ?? '') && stat.ino === BigInt(match[2] ?? '');
  } catch {
    return false;
  }
}

/**
 * `destination` itself, or — when it writes to the journal stream — a stream that prefixes each
 * line with its priority. pino tells a stream that asks for metadata the level of the line it
 * is about to write (`lastLevel`), so the JSON is never parsed again.
 */
export function journalPriorityDestination(
  destination: DestinationStream,
  env: NodeJS.ProcessEnv = process.env,
): DestinationStream {
  const fd = (destination as { fd?: unknown }).fd;
  if (typeof fd !== 'number' || !isJournalStream(fd, env)) return destination;
  const inner = destination as DestinationStream & {
    flush?: (callback: (error?: Error) => void) => void;
    flushSync?: () => void;
  };
  const prefixed = {
    [symbols.needsMetadataGsym]: true,
    lastLevel: 30,
    write(line: string): void {
      inner.write(`<${syslogPriorityOf(prefixed.lastLevel)}>${line}`);
    },
    flush: (callback: (error?: Error) => void) => (inner.flush === undefined ? callback() : inner.flush(callback)),
    flushSync: () => inner.flushSync?.(),
  };
  return prefixed;
}
