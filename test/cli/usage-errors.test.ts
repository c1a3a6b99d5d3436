import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { editDistance } from '../../src/app/common/cli/usage-diagnosis.js';
import { runCliInMemory } from '../support/run-cli.js';
import { assertBuildCurrent, CLI } from '../support/systemd/systemd-host.js';

interface UsageError {
  readonly ok: false;
  readonly error: {
    readonly code: string;
    readonly message: string;
    readonly suggestion?: string;
    readonly missing?: readonly string[];
  };
}

const COMMANDS = [
  'version',
  'status',
  'migrate',
  'fetch',
  'install',
  'activate',
  'rollback',
  'recover',
  'supervise',
  'daemon',
  'agent',
  'demo',
];

async function usageError(argv: readonly string[]): Promise<{ exitCode: number; error: UsageError['error'] }> {
  const run = await runCliInMemory([...argv, '--json']);
  return { exitCode: run.exitCode, error: (JSON.parse(run.stdout) as UsageError).error };
}

describe('usage errors', () => {
  it.each([
    ['stauts', 'status'],
    ['migarte', 'migrate'],
    ['rollbak', 'rollback'],
    ['Status', 'status'],
    ['deamon', 'daemon'],
  ])('a misspelt command %s is E_USAGE (exit 2) naming the nearest command', async (typo, meant) => {
    const { exitCode, error } = await usageError([typo]);
    expect({ exitCode, code: error.code, suggestion: error.suggestion }).toEqual({
      exitCode: 2,
      code: 'E_USAGE',
      suggestion: meant,
    });
  });

  it.each([
    [['rollout', 'stauts', 'fleet'], 'rollout status'],
    [['relase', 'quarantine', 'v2'], 'release quarantine'],
    [['rollout', 'aprove', 'fleet'], 'rollout approve'],
  ])('a misspelt two-word command %j is E_USAGE naming the nearest one', async (argv, meant) => {
    const { exitCode, error } = await usageError(argv);
    expect({ exitCode, code: error.code, suggestion: error.suggestion }).toEqual({
      exitCode: 2,
      code: 'E_USAGE',
      suggestion: meant,
    });
  });

  it('a command group named alone is E_USAGE', async () => {
    expect(await usageError(['rollout'])).toMatchObject({ exitCode: 2, error: { code: 'E_USAGE' } });
  });

  it('a command far from every known one gets no suggestion', async () => {
    const { exitCode, error } = await usageError(['frobnicate']);
    expect({ exitCode, code: error.code, suggestion: error.suggestion }).toEqual({
      exitCode: 2,
      code: 'E_USAGE',
      suggestion: undefined,
    });
  });

  it.each([
    [['fetch', '--output', '/tmp/x'], ['--url']],
    [['fetch'], ['--url', '--output']],
    [['install'], ['--url']],
    [['activate'], ['CANDIDATE']],
  ])(
    'a missing required option or argument (%j) is E_USAGE (exit 2) listing what is missing',
    async (argv, missing) => {
      const { exitCode, error } = await usageError(argv);
      expect({ exitCode, code: error.code, missing: error.missing }).toEqual({ exitCode: 2, code: 'E_USAGE', missing });
    },
  );

  it.each([
    [['fetch', '--url', 'http://x/a', '--output', '/tmp/x', '--mebmer', 'm'], '--member'],
    [['status', '--jsno'], '--json'],
    [['status', '--log-levle', 'info'], '--log-level'],
  ])('a misspelt option (%j) is E_USAGE (exit 2) naming the nearest option', async (argv, meant) => {
    const { exitCode, error } = await usageError(argv);
    expect({ exitCode, code: error.code, suggestion: error.suggestion }).toEqual({
      exitCode: 2,
      code: 'E_USAGE',
      suggestion: meant,
    });
  });

  it.each([
    ['an option without its value', ['status', '--log-level']],
    ['a value for a flag', ['status', '--json=yes']],
    ['an extra argument', ['status', 'extra']],
    ['two candidates', ['activate', '/tmp/a', '/tmp/b']],
    ['options and no command', ['--root', '/tmp']],
  ])('%s is E_USAGE (exit 2)', async (_name, argv) => {
    const { exitCode, error } = await usageError(argv);
    expect({ exitCode, code: error.code }).toEqual({ exitCode: 2, code: 'E_USAGE' });
  });

  it('without --json the error goes to stderr with its code, and stdout stays empty', async () => {
    const run = await runCliInMemory(['fetch', '--output', '/tmp/x']);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.startsWith('agent-upgrade: E_USAGE: ')).toBe(true);
  });

  it('keeps a credential in a mistyped URL out of the error', async () => {
    const canary = 'CANARY-usage-7c2d';
    const run = await runCliInMemory([`https://user:${canary}@example.com/x?sig=${canary}`, '--json']);
    const text = await runCliInMemory([`https://user:${canary}@example.com/x?sig=${canary}`]);
    expect([run.exitCode, text.exitCode]).toEqual([2, 2]);
    expect(`${run.stdout}${run.stderr}${text.stdout}${text.stderr}`).not.toContain(canary);
  });

  it('every help text names option values instead of clipanion placeholders', async () => {
    for (const argv of [['--help'], ...COMMANDS.map((command) => [command, '--help'])]) {
      const run = await runCliInMemory(argv);
      expect(run.exitCode).toBe(0);
      expect(run.stdout).not.toMatch(/ #\d/);
    }
  });

  it('`agent` is the daemon command: the same help, the same outcome', async () => {
    const [agentHelp, daemonHelp] = await Promise.all([
      runCliInMemory(['agent', '--help']),
      runCliInMemory(['daemon', '--help']),
    ]);
    expect(agentHelp.exitCode).toBe(0);
    expect(agentHelp).toEqual(daemonHelp);
    // The daemon's own outcome here (self-hosted, not run from a slot) is cli.test.ts's concern.
    const agent = await runCliInMemory(['agent', '--json']);
    const daemon = await runCliInMemory(['daemon', '--json']);
    expect(agent).toEqual(daemon);
  });

  it('counts a swap of neighbours as one edit', () => {
    expect([
      editDistance('stauts', 'status'),
      editDistance('status', 'status'),
      editDistance('', 'abc'),
      editDistance('kitten', 'sitting'),
    ]).toEqual([1, 0, 3, 3]);
  });
});

describe('usage errors from the built CLI', () => {
  beforeAll(() => assertBuildCurrent());

  it('a typo exits 2 with E_USAGE and the suggestion', () => {
    const run = spawnSync(process.execPath, [CLI, 'stauts', '--json'], { encoding: 'utf8', timeout: 30_000 });
    expect({ exitCode: run.status, error: (JSON.parse(run.stdout) as UsageError).error }).toMatchObject({
      exitCode: 2,
      error: { code: 'E_USAGE', suggestion: 'status' },
    });
  });

  it('a missing required option exits 2 with E_USAGE naming it', () => {
    const run = spawnSync(process.execPath, [CLI, 'fetch', '--output', '/tmp/never-written', '--json'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ exitCode: run.status, error: (JSON.parse(run.stdout) as UsageError).error }).toMatchObject({
      exitCode: 2,
      error: { code: 'E_USAGE', missing: ['--url'] },
    });
  });
});
