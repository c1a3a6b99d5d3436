import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isJournalStream, syslogPriorityOf } from '../../src/adapters/common/logging/journal-priority.js';
import { createPinoLogger } from '../../src/adapters/common/logging/pino-logger.js';
import { makeScratch } from '../support/real-tree.js';

describe('syslog priority of a pino level', () => {
  it.each([
    ['fatal', 60, 2],
    ['error', 50, 3],
    ['warn', 40, 4],
    ['info', 30, 6],
    ['debug', 20, 7],
    ['trace', 10, 7],
  ])('%s (%s) is <%s>', (_name, level, priority) => {
    expect(syslogPriorityOf(level)).toBe(priority);
  });
});

/**
 * A file stands in for the journal stream: JOURNAL_STREAM names its device and inode, as
 * systemd names the socket it connected to stderr.
 */
describe('log lines on the journal stream', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let logPath: string;
  beforeEach(() => {
    scratch = makeScratch();
    logPath = join(scratch.root, 'journal-stream');
    writeFileSync(logPath, '');
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    scratch.cleanup();
  });

  const identityOf = (path: string): string => {
    const stat = statSync(path, { bigint: true });
    return `${stat.dev}:${stat.ino}`;
  };
  const logEveryLevel = (): string[] => {
    const logger = createPinoLogger('debug', pino.destination({ dest: logPath, sync: true }));
    logger.warn({}, 'A warning.');
    logger.info({}, 'An info line.');
    logger.error({}, 'An error.');
    logger.debug({}, 'A debug line.');
    return readFileSync(logPath, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
  };
  const prefixes = (lines: readonly string[]): (string | null)[] =>
    lines.map((line) => /^<(\d)>\{/.exec(line)?.[1] ?? null);

  it('with JOURNAL_STREAM naming the stream, each line starts with its priority and is JSON after it', () => {
    vi.stubEnv('JOURNAL_STREAM', identityOf(logPath));
    const lines = logEveryLevel();
    expect(prefixes(lines)).toEqual(['4', '6', '3', '7']);
    expect(lines.map((line) => (JSON.parse(line.slice(3)) as { level: number }).level)).toEqual([40, 30, 50, 20]);
  });

  it('with JOURNAL_STREAM naming another file (stderr redirected, the variable inherited), lines are plain JSON', () => {
    const other = join(scratch.root, 'other');
    writeFileSync(other, '');
    vi.stubEnv('JOURNAL_STREAM', identityOf(other));
    expect(prefixes(logEveryLevel())).toEqual([null, null, null, null]);
  });

  it.each([
    ['unset', undefined],
    ['malformed', 'journal'],
    ['empty', ''],
  ])('with JOURNAL_STREAM %s, lines are plain JSON', (_name, value) => {
    vi.stubEnv('JOURNAL_STREAM', value);
    expect(prefixes(logEveryLevel())).toEqual([null, null, null, null]);
  });

  it('a descriptor that is not open is not the journal stream', () => {
    expect(isJournalStream(987_654, { JOURNAL_STREAM: identityOf(logPath) })).toBe(false);
  });
});
