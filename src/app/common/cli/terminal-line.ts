import type { Writable } from 'node:stream';

/** Erases from the cursor to the end of the line. */
const CLEAR_TO_END = '\u001b[K';

/**
 * The one transient line at the bottom of a terminal stream (the download progress bar) and the
 * lines printed above it. A log line first erases the transient one, then is printed, then the
 * transient line is drawn again below it: neither overwrites nor stacks on the other.
 */
export class TerminalLine {
  private text: string | null = null;

  constructor(private readonly stream: Writable) {}

  /** Replaces the transient line in place (`\r`, text, clear to the end). */
  show(text: string): void {
    this.text = text;
    this.stream.write(`\r${text}${CLEAR_TO_END}`);
  }

  /** Erases the transient line, leaving the cursor at the start of an empty line. */
  clear(): void {
    if (this.text !== null) this.stream.write(`\r${CLEAR_TO_END}`);
    this.text = null;
  }

  /** Prints a permanent line above the transient one (one write, so nothing interleaves). */
  printAbove(line: string): void {
    if (this.text === null) this.stream.write(`${line}\n`);
    else this.stream.write(`\r${CLEAR_TO_END}${line}\n${this.text}${CLEAR_TO_END}`);
  }
}

const lines = new WeakMap<Writable, TerminalLine>();

/** The one TerminalLine of `stream`: the logger and the progress bar must share it. */
export function terminalLineFor(stream: Writable): TerminalLine {
  let line = lines.get(stream);
  if (line === undefined) {
    line = new TerminalLine(stream);
    lines.set(stream, line);
  }
  return line;
}
