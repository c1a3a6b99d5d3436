import type { Writable } from 'node:stream';
import type { LogLevel } from '../../../adapters/common/logging/pino-logger.js';
import type { Logger } from '../../../ports/common/logger.js';
import { terminalLineFor } from './terminal-line.js';

/**
 * The CLI's logger on `stderr`. A person reads a terminal: one readable line per entry,
 * printed above the progress bar. Anything else (journald, a file, a pipe) gets pino's JSON
 * lines, written synchronously so none is lost when the process exits.
 */
export async function createCliLogger(
  level: string,
  stderr: Writable & { readonly isTTY?: boolean; readonly fd?: number },
): Promise<Logger> {
  const [{ pino }, { createPinoLogger }, { ttyLogDestination }] = await Promise.all([
    import('pino'),
    import('../../../adapters/common/logging/pino-logger.js'),
    import('../../../adapters/common/logging/tty-log-destination.js'),
  ]);
  if (stderr.isTTY === true)
    return createPinoLogger(
      level as LogLevel,
      ttyLogDestination((line) => terminalLineFor(stderr).printAbove(line)),
    );
  const destination =
    typeof stderr.fd === 'number'
      ? pino.destination({ dest: stderr.fd, sync: true })
      : { write: (line: string) => void stderr.write(line) };
  return createPinoLogger(level as LogLevel, destination);
}
