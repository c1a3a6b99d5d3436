import { pino, stdTimeFunctions, type DestinationStream } from 'pino';
import { redactUrlsInText } from '../../../domain/common/redacted-url.js';
import type { Logger } from '../../../ports/common/logger.js';
import { journalPriorityDestination } from './journal-priority.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * Builds the root logger. URLs reach logs only as RedactedUrl values, serialised to their
 * redacted text; the redact paths are a second net for fields that might carry credentials.
 */
export function createPinoLogger(level: LogLevel, destination: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { name: 'agent-upgrade' },
      timestamp: stdTimeFunctions.isoTime,
      // URLs are RedactedUrl values; printing them through the redactor also catches a raw
      // string that slipped in under the same key.
      serializers: { url: (value: unknown) => redactUrlsInText(String(value)) },
      redact: {
        paths: [
          'downloadURL',
          '*.downloadURL',
          'parameters.downloadURL',
          'headers.authorization',
          'token',
          '*.token',
          'kubeconfig',
        ],
        censor: '[REDACTED]',
      },
    },
    journalPriorityDestination(destination),
  );
}
