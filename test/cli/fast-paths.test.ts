import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { FAST_PATH_ARGUMENTS } from '../../src/app/main/fast-path-arguments.js';
import { runCliInMemory } from '../support/run-cli.js';
import { assertBuildCurrent } from '../support/systemd/systemd-host.js';

const BIN = join(dirname(fileURLToPath(import.meta.url)), '../../bin/agent-upgrade');

/**
 * The launcher answers host-independent command lines from what the build recorded; those
 * answers must be the CLI's own, byte for byte, and every other command line must reach the CLI.
 */
describe('bin/agent-upgrade fast paths', () => {
  beforeAll(() => assertBuildCurrent());

  it.each(FAST_PATH_ARGUMENTS.map((argv) => [argv.join(' '), argv] as const))(
    '%s: the same bytes and exit code as the CLI',
    async (_label, argv) => {
      const launched = spawnSync(process.execPath, [BIN, ...argv], { encoding: 'utf8', timeout: 30_000 });
      const direct = await runCliInMemory(argv);
      expect({ exitCode: launched.status, stdout: launched.stdout, stderr: launched.stderr }).toEqual({
        exitCode: direct.exitCode,
        stdout: direct.stdout,
        stderr: direct.stderr,
      });
    },
  );

  it('a command line that is not recorded runs the CLI (a usage error is exit 2 with E_USAGE)', () => {
    const launched = spawnSync(process.execPath, [BIN, 'version', '--no-such-option', '--json'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({
      exitCode: launched.status,
      code: (JSON.parse(launched.stdout) as { error: { code: string } }).error.code,
    }).toEqual({ exitCode: 2, code: 'E_USAGE' });
  });
});
