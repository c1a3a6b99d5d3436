import { relative } from 'node:path';
import { expect } from 'vitest';
import { formatSeed, SEED_VARIABLE } from './seed.js';

/** Regex metacharacters of a `-t` pattern; a quote becomes `.` so the line needs no shell escaping. */
function namePattern(testName: string): string {
  return testName
    .split(' > ')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll("'", '.'))
    .join(' ');
}

/**
 * The command that runs one test again: `SIM_SEED=0x7 npx vitest run test/sim/x.test.ts -t '…'`.
 * `testName` is vitest's name with ` > ` between a describe and its test (what
 * `expect.getState().currentTestName` gives); no seed for an exhaustive enumeration.
 */
export function replayCommand(file: string, testName: string, seed?: number): string {
  const path = relative(process.cwd(), file) || file;
  const prefix = seed === undefined ? '' : `${SEED_VARIABLE}=${formatSeed(seed)} `;
  return `${prefix}npx vitest run ${path} -t '${namePattern(testName)}'`;
}

/** The replay command of the test running now. */
export function currentReplayCommand(seed?: number): string {
  const state = expect.getState();
  return replayCommand(state.testPath ?? 'unknown file', state.currentTestName ?? '', seed);
}
