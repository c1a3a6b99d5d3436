import { pino, stdTimeFunctions, type DestinationStream } from 'pino';
import type { Logger } from '../../ports/logger.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * Builds the root logger. URLs reach logs only as RedactedUrl values (their JSON form is
 * redacted); the redact paths are a second net for fields that might carry credentials.
 */
export function createPinoLogger(level: LogLevel, destination: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { name: 'agent-upgrade' },
      timestamp: stdTimeFunctions.isoTime,
      redact: {
        paths: ['downloadURL', '*.downloadURL', 'parameters.downloadURL', 'headers.authorization', 'token', '*.token', 'kubeconfig'],
        censor: '[REDACTED]',
      },
    },
    destination,
  );
}
