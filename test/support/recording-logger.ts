import type { LogFields, Logger } from '../../src/ports/common/logger.js';

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly fields: LogFields;
  readonly message: string;
}

/** A Logger that keeps every line in memory, for tests that check what reached the logs. */
export class RecordingLogger implements Logger {
  constructor(
    readonly lines: LogLine[] = [],
    private readonly bindings: LogFields = {},
  ) {}

  debug(fields: LogFields, message: string): void {
    this.lines.push({ level: 'debug', fields: { ...this.bindings, ...fields }, message });
  }

  info(fields: LogFields, message: string): void {
    this.lines.push({ level: 'info', fields: { ...this.bindings, ...fields }, message });
  }

  warn(fields: LogFields, message: string): void {
    this.lines.push({ level: 'warn', fields: { ...this.bindings, ...fields }, message });
  }

  error(fields: LogFields, message: string): void {
    this.lines.push({ level: 'error', fields: { ...this.bindings, ...fields }, message });
  }

  child(bindings: LogFields): Logger {
    return new RecordingLogger(this.lines, { ...this.bindings, ...bindings });
  }
}
