import { describe, expect, it } from 'vitest';
import { AGENT_UPGRADE_VERSION } from '../../src/package-version.js';
import { runCliInMemory } from '../support/run-cli.js';

/** However the version is asked for, the answer is the same text (and the same JSON). */
describe('version, --version and -v', () => {
  it('print the same line and exit 0', async () => {
    const runs = await Promise.all([['version'], ['--version'], ['-v']].map((argv) => runCliInMemory(argv)));
    expect(runs.map((run) => ({ exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr }))).toEqual(
      Array.from({ length: 3 }, () => ({
        exitCode: 0,
        stdout: `agent-upgrade ${AGENT_UPGRADE_VERSION}\n`,
        stderr: '',
      })),
    );
  });

  it('print the same JSON document with --json', async () => {
    const runs = await Promise.all(
      [
        ['version', '--json'],
        ['--version', '--json'],
      ].map((argv) => runCliInMemory(argv)),
    );
    expect(runs.map((run) => [run.exitCode, JSON.parse(run.stdout) as unknown])).toEqual([
      [0, { ok: true, version: AGENT_UPGRADE_VERSION }],
      [0, { ok: true, version: AGENT_UPGRADE_VERSION }],
    ]);
  });
});
