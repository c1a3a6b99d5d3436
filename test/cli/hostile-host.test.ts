import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readlinkSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const SLOTS = 'usr/local/lib/aks-flex-node';
const ETC = 'etc/aks-flex-node';
const agentScript = (version: string) => `#!/bin/sh\n[ "$1" = version ] && echo "agent version v${version}"\nexit 0\n`;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * The direct path attacked as a hostile host would (a killed activation's leftovers, a broken
 * `current`, a state file that knows nothing, refused requests): codes and resulting state.
 * Sandboxes with `service.manager: none`, so the agent is never started.
 */
describe('the direct path on a hostile host', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let releases: HostileServer;
  const at = (path: string) => join(scratch.root, path);
  const link = (name: string) => readlinkSync(at(`${SLOTS}/aks-flex-node-${name}`));
  const cli = async (...args: string[]) => {
    const run = await runCliInMemory([...args, '--root', scratch.root, '--json']);
    const doc = JSON.parse(run.stdout || '{}') as { ok?: boolean; error?: { code: string; hostChanged?: boolean } };
    return { exitCode: run.exitCode, code: doc.error?.code ?? null, doc };
  };
  const writeState = (state: object) =>
    writeFileSync(
      at(`${ETC}/agent-upgrade-state.json`),
      `${JSON.stringify({ kind: 'AgentUpgradeState', schemaVersion: 1, slots: { blue: null, green: null }, quarantine: [], highestCommittedVersion: null, ...state }, null, 2)}\n`,
    );

  beforeAll(async () => {
    releases = await startHostileServer();
  });
  afterAll(async () => releases?.close());
  beforeEach(() => {
    scratch = makeScratch();
    mkdirSync(at(ETC), { recursive: true });
    writeFileSync(
      at(`${ETC}/agent-upgrade.json`),
      JSON.stringify({
        agent: { allowScripts: true },
        service: { manager: 'none' },
        container: { manager: 'none' },
        cluster: { manager: 'none' },
      }),
    );
    writeExecutable(at('usr/local/bin/aks-flex-node'), agentScript('3.0.0'));
  });
  afterEach(() => scratch.cleanup());

  it('a killed activation left its marker with current on the candidate: migrate rolls back (unproven), the marker goes', async () => {
    expect((await cli('migrate')).exitCode).toBe(0);
    writeExecutable(at(`${SLOTS}/aks-flex-node-green`), agentScript('4.0.0'));
    unlinkSync(at(`${SLOTS}/aks-flex-node-current`));
    symlinkSync('aks-flex-node-green', at(`${SLOTS}/aks-flex-node-current`));
    const marker = {
      kind: 'AgentDirectActivation',
      schemaVersion: 1,
      previous: 'blue',
      candidate: 'green',
      candidateDigest: sha256(agentScript('4.0.0')),
      candidateVersion: '4.0.0',
      serviceActive: true,
    };
    writeFileSync(at(`${ETC}/agent-upgrade-activation.json`), JSON.stringify(marker));
    const run = await cli('migrate');
    expect({
      exitCode: run.exitCode,
      current: link('current'),
      marker: existsSync(at(`${ETC}/agent-upgrade-activation.json`)),
    }).toEqual({
      exitCode: 0,
      current: 'aks-flex-node-blue',
      marker: false,
    });
  });

  it('repairing a dangling current prefers a good last-good over a quarantined crasher on blue and an older v1', async () => {
    expect((await cli('migrate')).exitCode).toBe(0);
    writeExecutable(at(`${SLOTS}/aks-flex-node-green`), agentScript('5.0.0'));
    writeExecutable(at(`${SLOTS}/aks-flex-node-blue`), agentScript('6.0.0-crasher'));
    unlinkSync(at(`${SLOTS}/aks-flex-node-last-good`));
    symlinkSync('aks-flex-node-green', at(`${SLOTS}/aks-flex-node-last-good`));
    unlinkSync(at(`${SLOTS}/aks-flex-node-current`));
    symlinkSync('aks-flex-node-gone', at(`${SLOTS}/aks-flex-node-current`));
    writeState({ quarantine: [sha256(agentScript('6.0.0-crasher'))], highestCommittedVersion: '5.0.0' });
    expect((await cli('migrate')).exitCode).toBe(0);
    expect(link('current')).toBe('aks-flex-node-green');
  });

  it('without last-good, an older binary is never made current: the state knows nothing, its version is asked', async () => {
    expect((await cli('migrate')).exitCode).toBe(0);
    writeExecutable(at(`${SLOTS}/aks-flex-node-blue`), agentScript('1.0.0'));
    writeExecutable(at(`${SLOTS}/aks-flex-node-green`), agentScript('5.0.0'));
    unlinkSync(at(`${SLOTS}/aks-flex-node-last-good`));
    unlinkSync(at(`${SLOTS}/aks-flex-node-current`));
    writeState({ highestCommittedVersion: '5.0.0' });
    expect((await cli('migrate')).exitCode).toBe(0);
    expect(link('current')).toBe('aks-flex-node-green');
  });

  it.each([
    ['an absolute target', '/bin/true'],
    ['a relative escape', `${'../'.repeat(12)}bin/true`],
  ])(
    'a current leaving --root by %s is refused (E_LAYOUT), the host file is never copied in',
    async (_label, target) => {
      unlinkSync(at('usr/local/bin/aks-flex-node'));
      mkdirSync(at(SLOTS), { recursive: true, mode: 0o750 });
      symlinkSync(target, at(`${SLOTS}/aks-flex-node-current`));
      const before = snapshotTree(scratch.root, []);
      expect(await cli('migrate')).toMatchObject({ exitCode: 1, code: 'E_LAYOUT' });
      expect(snapshotTree(scratch.root, [])).toEqual(before);
    },
  );

  it('a version older than what current runs is refused even when the state file is lost (the binary is asked)', async () => {
    expect((await cli('migrate')).exitCode).toBe(0);
    // No state file: nothing on the host records which version runs.
    expect(existsSync(at(`${ETC}/agent-upgrade-state.json`))).toBe(false);
    writeExecutable(at('staging/old'), agentScript('0.5.0'));
    const before = snapshotTree(scratch.root, ['/staging', '/run']);
    expect(await cli('activate', at('staging/old'))).toMatchObject({ exitCode: 1, code: 'E_DOWNGRADE_REFUSED' });
    expect(snapshotTree(scratch.root, ['/staging', '/run'])).toEqual(before);
  });

  it('a directory named like a temp in the slot directory is not ours: status and commands agree, nothing blocks', async () => {
    expect((await cli('migrate')).exitCode).toBe(0);
    mkdirSync(at(`${SLOTS}/.aks-flex-node-blue.tmp-foreign`));
    const status = await cli('status');
    expect((status.doc as { status?: { layout: { condition: string } } }).status?.layout.condition).toBe('managed');
    expect((await cli('migrate')).exitCode).toBe(0);
    writeExecutable(at('staging/next'), agentScript('3.1.0'));
    expect((await cli('activate', at('staging/next'))).exitCode).toBe(0);
    expect({ current: link('current'), foreign: existsSync(at(`${SLOTS}/.aks-flex-node-blue.tmp-foreign`)) }).toEqual({
      current: 'aks-flex-node-green',
      foreign: true,
    });
  });

  it('a marker that does not parse is refused (E_RECORD) and left in place, nothing changed', async () => {
    expect((await cli('migrate')).exitCode).toBe(0);
    writeFileSync(at(`${ETC}/agent-upgrade-activation.json`), '{"kind":"AgentDirectActivation","schemaVersion":1}');
    writeExecutable(at('staging/next'), agentScript('3.1.0'));
    const staged = snapshotTree(scratch.root);
    expect(await cli('migrate')).toMatchObject({ exitCode: 1, code: 'E_RECORD' });
    expect(await cli('activate', at('staging/next'))).toMatchObject({ exitCode: 1, code: 'E_RECORD' });
    expect(snapshotTree(scratch.root)).toEqual(staged);
  });

  it('a broken current with only unfit binaries left: migrate refuses (E_LAYOUT) rather than pick one, nothing changed', async () => {
    expect((await cli('migrate')).exitCode).toBe(0);
    writeExecutable(at(`${SLOTS}/aks-flex-node-green`), agentScript('2.0.0'));
    unlinkSync(at(`${SLOTS}/aks-flex-node-last-good`));
    unlinkSync(at(`${SLOTS}/aks-flex-node-current`));
    // Blue is quarantined; green is older than what was committed.
    writeState({ quarantine: [sha256(agentScript('3.0.0'))], highestCommittedVersion: '3.0.0' });
    const before = snapshotTree(scratch.root);
    expect(await cli('migrate')).toMatchObject({ exitCode: 1, code: 'E_LAYOUT' });
    expect(snapshotTree(scratch.root)).toEqual(before);
  });

  describe.each([
    ['a symlink (an alias of green)', (path: string) => symlinkSync('aks-flex-node-green', path)],
    ['a directory', (path: string) => mkdirSync(path)],
    ['a FIFO', (path: string) => expect(spawnSync('mkfifo', [path]).status).toBe(0)],
  ])('blue is %s: it blocks only what would write it', (_label, breakSlot) => {
    const blue = `${SLOTS}/aks-flex-node-blue`;
    /** A managed host whose green slot is valid and named by last-good, and whose blue slot is broken. */
    const arrange = async (current: string) => {
      expect((await cli('migrate')).exitCode).toBe(0);
      writeExecutable(at(`${SLOTS}/aks-flex-node-green`), agentScript('3.0.0'));
      for (const [name, target] of [
        ['last-good', 'aks-flex-node-green'],
        ['current', current],
      ] as const) {
        unlinkSync(at(`${SLOTS}/aks-flex-node-${name}`));
        symlinkSync(target, at(`${SLOTS}/aks-flex-node-${name}`));
      }
      unlinkSync(at(blue));
      breakSlot(at(blue));
      return snapshotTree(scratch.root)[`/${blue}`];
    };
    const brokenSlots = (doc: object, key: 'migration' | 'rollback') =>
      (doc as Record<string, { brokenSlots: { code: string }[] }>)[key]?.brokenSlots.map((problem) => problem.code);

    it('migrate repairs a dangling current from last-good, then reports blue (E_LAYOUT) and leaves it', async () => {
      const before = await arrange('aks-flex-node-gone');
      const run = await cli('migrate');
      const status = (await cli('status')).doc as { status?: { layout: { condition: string } } };
      expect({
        exitCode: run.exitCode,
        current: link('current'),
        reported: brokenSlots(run.doc, 'migration'),
        blue: snapshotTree(scratch.root)[`/${blue}`],
        condition: status.status?.layout.condition,
      }).toEqual({
        exitCode: 0,
        current: 'aks-flex-node-green',
        reported: ['E_LAYOUT'],
        blue: before,
        condition: 'invalid',
      });
    });

    it('rollback from blue (current) goes to the green last-good and reports blue', async () => {
      const before = await arrange('aks-flex-node-blue');
      const run = await cli('rollback');
      expect({
        exitCode: run.exitCode,
        current: link('current'),
        reported: brokenSlots(run.doc, 'rollback'),
        blue: snapshotTree(scratch.root)[`/${blue}`],
      }).toEqual({ exitCode: 0, current: 'aks-flex-node-green', reported: ['E_LAYOUT'], blue: before });
    });

    it('an activation, which would install into blue, is refused (E_LAYOUT) and changes nothing', async () => {
      await arrange('aks-flex-node-green');
      writeExecutable(at('staging/next'), agentScript('3.1.0'));
      const before = snapshotTree(scratch.root, ['/staging', '/run']);
      expect(await cli('activate', at('staging/next'))).toMatchObject({ exitCode: 1, code: 'E_LAYOUT' });
      expect(snapshotTree(scratch.root, ['/staging', '/run'])).toEqual(before);
    });
  });

  describe('install refuses before it changes anything', () => {
    const legacyUntouched = () => ({
      entryIsFile:
        !existsSync(at(SLOTS)) && readFileSync(at('usr/local/bin/aks-flex-node'), 'utf8') === agentScript('3.0.0'),
    });

    it.each([
      ['an ftp URL', ['--url', 'ftp://x/y'], 2, 'E_INVALID_URL'],
      ['a malformed digest', ['--url', 'http://127.0.0.1:9/a.tar.gz', '--sha256', 'nope'], 2, 'E_INVALID_DIGEST'],
      ['a malformed --version', ['--url', 'http://127.0.0.1:9/a.tar.gz', '--version', 'one'], 2, 'E_USAGE'],
    ] as const)('%s on a legacy host: exit %s with %s, not migrated', async (_label, args, exitCode, code) => {
      expect(await cli('install', ...args)).toMatchObject({ exitCode, code });
      expect(legacyUntouched()).toEqual({ entryIsFile: true });
    });

    it('a 404 on a legacy host: exit 1, not migrated, no temp left', async () => {
      const before = snapshotTree(scratch.root);
      expect(await cli('install', '--url', releases.url('/missing.tar.gz'))).toMatchObject({
        exitCode: 1,
        code: 'E_HTTP_STATUS',
      });
      expect(snapshotTree(scratch.root)).toEqual(before);
    });

    it('a pending managed record: exit 4 before any download, and --preflight says so too', async () => {
      const requestsBefore = releases.requests.filter((request) => request.path === '/counted.tar.gz').length;
      const record = {
        kind: 'AgentUpgradeRecord',
        schemaVersion: 1,
        operation: { name: 'op', uid: null },
        instanceId: '0'.repeat(32),
        activeMachine: null,
        candidate: null,
        previous: null,
        candidateDigest: null,
        switchCommitted: false,
        recoveryRequired: false,
        failure: null,
        completed: false,
      };
      writeFileSync(at(`${ETC}/agent-upgrade-signal.json`), JSON.stringify(record));
      const before = snapshotTree(scratch.root);
      expect(await cli('install', '--url', releases.url('/counted.tar.gz'))).toMatchObject({
        exitCode: 4,
        code: 'E_UPGRADE_PENDING',
      });
      expect(await cli('install', '--url', releases.url('/counted.tar.gz'), '--preflight')).toMatchObject({
        exitCode: 4,
        code: 'E_UPGRADE_PENDING',
      });
      const requests =
        releases.requests.filter((request) => request.path === '/counted.tar.gz').length - requestsBefore;
      expect({ requests, tree: snapshotTree(scratch.root) }).toEqual({ requests: 0, tree: before });
    });
  });
});
