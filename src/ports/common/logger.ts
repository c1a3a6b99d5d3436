/**
 * The structural subset of pino the app and adapters use. Messages are full sentences; fields
 * come from LogKeys (src/app/common/log-keys.ts). URLs are logged only as RedactedUrl values.
 */
export interface LogFields {
  readonly [key: string]: unknown;
}

export interface Logger {
  debug(fields: LogFields, message: string): void;
  info(fields: LogFields, message: string): void;
  warn(fields: LogFields, message: string): void;
  error(fields: LogFields, message: string): void;
  child(bindings: LogFields): Logger;
}
