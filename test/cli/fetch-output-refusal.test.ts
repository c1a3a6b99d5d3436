import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseArchive, sha256Hex } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { makeScratch, makeSymlink, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const MEMBER = process.arch === 'arm64' ? 'aks-flex-node-linux-arm64' : 'aks-flex-node-linux-amd64';
const CONTENT = '#!/bin/sh\necho v9.9.9\n';
const SLOTS = 'usr/local/lib/aks-flex-node';

/**
 * `fetch --output` takes no lock and runs no candidate checks, so it must never write over what
 * the upgrader manages, however the path reaches it. Each form below names a managed file of a
 * migrated `--root` sandbox; each must fail with E_USAGE (exit 2) and leave the sandbox as it was.
 */
describe('fetch --output refuses managed files', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let server: HostileServer;
  let root: string;
  const archive = releaseArchive(MEMBER, CONTENT);

  beforeEach(async () => {
    scratch = makeScratch();
    server = await startHostileServer();
    server.route('/release.tar.gz', serve(archive));
    root = join(scratch.root, 'host');
    mkdirSync(join(root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' } }),
    );
    writeExecutable(join(root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1.0.0\n');
    expect((await runCliInMemory(['migrate', '--root', root, '--json'])).exitCode).toBe(0);
    writeFileSync(join(root, 'etc/aks-flex-node/agent-upgrade-state.json'), '{}');
  });
  afterEach(async () => {
    await server.close();
    scratch.cleanup();
  });

  const fetchTo = (output: string) =>
    runCliInMemory([
      'fetch',
      '--url',
      server.url('/release.tar.gz'),
      '--sha256',
      sha256Hex(archive),
      '--output',
      output,
      '--root',
      root,
      '--json',
    ]);

  const forms: ReadonlyArray<readonly [string, () => string]> = [
    ['the active slot', () => join(root, SLOTS, 'aks-flex-node-blue')],
    ['the inactive slot', () => join(root, SLOTS, 'aks-flex-node-green')],
    ['the current link', () => join(root, SLOTS, 'aks-flex-node-current')],
    ['the last-good link', () => join(root, SLOTS, 'aks-flex-node-last-good')],
    ['the compatibility entry', () => join(root, 'usr/local/bin/aks-flex-node')],
    ['the upgrade record (absent)', () => join(root, 'etc/aks-flex-node/agent-upgrade-signal.json')],
    ['the state file', () => join(root, 'etc/aks-flex-node/agent-upgrade-state.json')],
    ['a temp name in the slot directory', () => join(root, SLOTS, '.aks-flex-node-blue.tmp-download')],
    ['the active slot through ..', () => `${join(root, 'usr/local/bin')}/../lib/aks-flex-node/aks-flex-node-blue`],
    [
      'the active slot through a symlinked parent directory',
      () => {
        makeSymlink(join(scratch.root, 'elsewhere/slots'), join(root, SLOTS));
        return join(scratch.root, 'elsewhere/slots/aks-flex-node-blue');
      },
    ],
    [
      'the active slot through a symlinked parent reached with ..',
      () => {
        makeSymlink(join(scratch.root, 'elsewhere/lib'), join(root, 'usr/local/lib'));
        return `${join(scratch.root, 'elsewhere/lib')}/../lib/aks-flex-node/aks-flex-node-blue`;
      },
    ],
    [
      'a symlink to the active slot',
      () => {
        makeSymlink(join(scratch.root, 'elsewhere/agent'), join(root, SLOTS, 'aks-flex-node-blue'));
        return join(scratch.root, 'elsewhere/agent');
      },
    ],
  ];

  it.each(forms)('refuses %s with E_USAGE (exit 2) and changes nothing', async (_name, outputOf) => {
    const output = outputOf();
    const before = snapshotTree(scratch.root);
    const run = await fetchTo(output);
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_USAGE' } });
    expect(snapshotTree(scratch.root)).toEqual(before);
  });

  it('still fetches to a path outside the layout', async () => {
    const output = join(scratch.root, 'candidate');
    const run = await fetchTo(output);
    expect(run.exitCode).toBe(0);
    expect(readFileSync(output, 'utf8')).toBe(CONTENT);
  });
});
