import type { DestinationStream } from 'pino';

/** pino's numeric levels, as a person reads them. */
const LEVEL_WORDS: Readonly<Record<number, string>> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warning',
  50: 'error',
  60: 'fatal',
};
/** What every entry carries and a reader at a terminal does not need repeated. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(['level', 'time', 'name', 'msg', 'pid', 'hostname']);
/** C0, DEL and C1 controls: a logged value (a server's reason phrase) must not drive the terminal. */
const CONTROL_CHARACTERS = /\p{Cc}/gu;

/**
 * A pino destination for a terminal: each JSON entry becomes one readable line — `warning:
 * <message> (key=value, …)` — handed to `writeLine`, which prints it (the CLI prints it above
 * its progress bar). The entry is formatted after pino serialised it, so redaction already
 * applied.
 */
export function ttyLogDestination(writeLine: (line: string) => void): DestinationStream {
  return {
    write(chunk: string): void {
      for (const entry of chunk.split('\n')) if (entry !== '') writeLine(formatLogEntry(entry));
    },
  };
}

/** One pino JSON line as `<level>: <message> (<fields>)`; anything else is printed as is, made safe. */
export function formatLogEntry(json: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    return printable(json);
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return printable(json);
  const record = entry as Record<string, unknown>;
  const level = typeof record.level === 'number' ? (LEVEL_WORDS[record.level] ?? `level ${record.level}`) : 'log';
  const message = typeof record.msg === 'string' ? record.msg : '';
  const fields = Object.entries(record)
    .filter(([key]) => !ENVELOPE_KEYS.has(key))
    .map(([key, value]) => `${key}=${fieldText(value)}`);
  return printable(`${level}: ${message}${fields.length === 0 ? '' : ` (${fields.join(', ')})`}`);
}

/** A serialised error is its message (and code), not its stack; other values are their JSON. */
function fieldText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string') {
    const { message, code } = value as { message: string; code?: unknown };
    return typeof code === 'string' ? `${code}: ${message}` : message;
  }
  return JSON.stringify(value) ?? String(value);
}

function printable(text: string): string {
  return text.replace(CONTROL_CHARACTERS, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
