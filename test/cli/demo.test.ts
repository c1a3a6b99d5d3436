import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCliInMemory } from '../support/run-cli.js';

interface Step {
  readonly phase: string;
  readonly current: string | null;
  readonly lastGood: string | null;
  readonly running: string | null;
  readonly code: string | null;
  readonly quarantined: string[];
}

describe('agent-upgrade demo', () => {
  it('migrates, upgrades to a signed v2, refuses a swapped v2.1, rolls back v3 at its gate and v3.1 in its watch window, and leaves nothing behind', async () => {
    const run = await runCliInMemory(['demo', '--json']);
    expect(run.exitCode).toBe(0);
    const { demo } = JSON.parse(run.stdout) as { demo: { sandbox: string; kept: boolean; steps: Step[] } };
    expect(demo.steps.map((step) => step.phase)).toEqual([
      'legacy install',
      'migrate',
      'start',
      'install v2.0.0',
      'install v2.1.0',
      'install v3.0.0',
      'install v3.1.0',
    ]);
    const slot = (path: string | null) => path?.replace(/^.*aks-flex-node-/, '') ?? null;
    expect(demo.steps.map((step) => [slot(step.current), slot(step.lastGood), step.running])).toEqual([
      [null, null, null],
      ['blue', 'blue', null],
      ['blue', 'blue', 'blue (v1.0.0)'],
      ['green', 'blue', 'green (v2.0.0)'],
      ['green', 'blue', 'green (v2.0.0)'],
      ['green', 'green', 'green (v2.0.0)'],
      ['green', 'green', 'green (v2.0.0)'],
    ]);
    // The swapped archive is refused before it reaches a slot; the crashing ones are rolled back,
    // v3.1 after it passed the stability gate, and both quarantined.
    expect(demo.steps.map((step) => step.code)).toEqual([
      null,
      null,
      null,
      null,
      'E_UNTRUSTED',
      'E_UNHEALTHY',
      'E_UNHEALTHY',
    ]);
    expect(demo.steps.slice(-3).map((step) => step.quarantined)).toEqual([[], ['3.0.0'], ['3.0.0', '3.1.0']]);
    expect(existsSync(demo.sandbox)).toBe(false);
    expect(processesUnder(demo.sandbox)).toEqual([]);
  }, 60_000);
});

/** PIDs whose executable lies under `directory` (a deleted file still shows its old path). */
function processesUnder(directory: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readlinkSync(`/proc/${pid}/exe`).startsWith(directory);
      } catch {
        return false;
      }
    })
    .map(Number);
}
