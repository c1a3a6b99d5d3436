import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AGENT_UPGRADE_VERSION } from '../../src/package-version.js';
import { runCliInMemory } from '../support/run-cli.js';
import { expectGolden } from '../support/golden.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';

describe('cli', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const normalize = (text: string): string => text.split(scratch.root).join('<root>');

  beforeEach(() => {
    scratch = makeScratch();
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'none' } }),
    );
  });
  afterEach(() => scratch.cleanup());

  it.each([
    ['--help'],
    ['version', '--help'],
    ['status', '--help'],
    ['migrate', '--help'],
    ['fetch', '--help'],
    ['install', '--help'],
    ['activate', '--help'],
    ['rollback', '--help'],
    ['recover', '--help'],
    ['supervise', '--help'],
    ['daemon', '--help'],
    ['demo', '--help'],
    ['controller', '--help'],
  ])('prints help for %s', async (...argv) => {
    const run = await runCliInMemory(argv);
    expect(run.exitCode).toBe(0);
    expectGolden(`help-${argv.filter((arg) => arg !== '--help').join('-') || 'main'}.txt`, run.stdout);
  });

  it.each([[[]], [['install']], [['rollout', 'status']]])(
    'help %j answers as --help does',
    async (command: string[]) => {
      const help = await runCliInMemory(['help', ...command]);
      expect(help).toEqual(await runCliInMemory([...command, '--help']));
      expect(help.exitCode).toBe(0);
    },
  );

  it('help for a command that does not exist is E_USAGE naming the nearest one', async () => {
    const run = await runCliInMemory(['help', 'instal', '--json']);
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_USAGE', suggestion: 'install' } });
  });

  it('prints the version on one line, as text and as JSON', async () => {
    const text = await runCliInMemory(['version']);
    const json = await runCliInMemory(['version', '--json']);
    expect(text).toEqual({ exitCode: 0, stdout: `agent-upgrade ${AGENT_UPGRADE_VERSION}\n`, stderr: '' });
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, version: AGENT_UPGRADE_VERSION });
  });

  it('migrates a sandbox and reports it as JSON; status matches the golden file', async () => {
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
    const migrate = await runCliInMemory(['migrate', '--root', scratch.root, '--json']);
    const status = await runCliInMemory(['status', '--root', scratch.root, '--json']);
    const statusText = await runCliInMemory(['status', '--root', scratch.root]);

    expect(migrate.exitCode).toBe(0);
    expectGolden('migrate-legacy.json', normalize(migrate.stdout));
    expect(status.exitCode).toBe(0);
    expectGolden('status-managed.json', normalize(status.stdout));
    expectGolden('status-managed.txt', normalize(statusText.stdout));
  });

  it.each([
    ['an unknown command', ['frobnicate', '--json'], 2, 'E_USAGE'],
    ['an invalid log level', ['status', '--log-level', 'loud', '--json'], 2, 'E_USAGE'],
    ['a relative --root', ['status', '--root', 'relative/dir', '--json'], 2, 'E_USAGE'],
    ['a missing --config file', ['status', '--config', '/nonexistent/agent-upgrade.json', '--json'], 2, 'E_CONFIG'],
    ['the daemon, self-hosted but not run from a slot', ['daemon', '--json'], 2, 'E_CONFIG'],
  ])('fails on %s with one JSON error document', async (_name, argv, exitCode, code) => {
    const run = await runCliInMemory(argv);
    expect(run.exitCode).toBe(exitCode);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code } });
  });

  it.each([
    ['an unknown key', { service: { manager: 'none', colour: 'blue' } }],
    ['a wrong type', { health: { timeoutMs: 'soon' } }],
    ['a relative path', { paths: { slotDir: 'usr/lib' } }],
    ['an unknown mode', { agent: { mode: 'sideways' } }],
    ['the root directory as the container binary', { container: { binaryPath: '/' } }],
    ['the root directory as the supervisor socket', { service: { supervisorSocket: '/' } }],
  ])('refuses a configuration with %s (E_CONFIG, exit 2) and changes nothing', async (_name, config) => {
    writeFileSync(join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'), JSON.stringify(config));
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), 'v1');
    const before = snapshotTree(scratch.root);

    const run = await runCliInMemory(['migrate', '--root', scratch.root, '--json']);

    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_CONFIG' } });
    expect(snapshotTree(scratch.root)).toEqual(before);
  });

  it('refuses to migrate production paths without root (E_NOT_ROOT, exit 1)', async () => {
    const configPath = join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json');
    const run = await runCliInMemory(['migrate', '--config', configPath, '--json'], { euid: 1000 });
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_NOT_ROOT' } });
  });

  it('reports a broken layout in text on stderr with its code and exit 1', async () => {
    mkdirSync(join(scratch.root, 'usr/local/bin/aks-flex-node'), { recursive: true });
    const run = await runCliInMemory(['migrate', '--root', scratch.root]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr.startsWith('agent-upgrade: E_LAYOUT: ')).toBe(true);
  });
});

describe('cli: recover, activate --preflight, rollback', () => {
  it('recover without a pending upgrade changes nothing and exits 0', async () => {
    const scratch = makeScratch();
    try {
      mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
      writeFileSync(
        join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
        JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' } }),
      );
      writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), 'v1');
      const before = snapshotTree(scratch.root);
      const run = await runCliInMemory(['recover', '--root', scratch.root, '--message', 'crash loop', '--json']);
      expect(run.exitCode).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ ok: true, recover: { recovered: false, rolledBackTo: null } });
      expect(snapshotTree(scratch.root)).toEqual(before);
    } finally {
      scratch.cleanup();
    }
  });

  it('activate --preflight prints the plan as JSON and changes nothing; rollback on a legacy host fails with E_LAYOUT', async () => {
    const scratch = makeScratch();
    try {
      mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
      writeFileSync(
        join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
        JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' }, agent: { allowScripts: true } }),
      );
      writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), 'v1');
      writeExecutable(join(scratch.root, 'candidate'), 'v2');
      const before = snapshotTree(scratch.root);

      const preflight = await runCliInMemory([
        'activate',
        join(scratch.root, 'candidate'),
        '--preflight',
        '--root',
        scratch.root,
        '--json',
      ]);
      const rollback = await runCliInMemory(['rollback', '--root', scratch.root, '--json']);

      expect(preflight.exitCode).toBe(0);
      expect(JSON.parse(preflight.stdout)).toMatchObject({
        ok: true,
        preflight: { initializeLayout: true, candidateChanged: true },
      });
      expect(rollback.exitCode).toBe(1);
      expect(JSON.parse(rollback.stdout)).toMatchObject({ ok: false, error: { code: 'E_LAYOUT' } });
      expect(snapshotTree(scratch.root)).toEqual(before);
    } finally {
      scratch.cleanup();
    }
  });
});
