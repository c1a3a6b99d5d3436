import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { assertBuildCurrent, CLI } from '../support/systemd/systemd-host.js';

/** The unprivileged user the command runs as; the sandbox belongs to root. */
const NOBODY = '65534';
const RUN_TIMEOUT_MS = 30_000;

/**
 * A mutating command run without root against a tree it does not own meets EACCES at the host
 * lock, the first thing it touches: that is the documented E_NOT_ROOT (exit 1), not E_IO, and
 * nothing in the tree changes. Spawns the built CLI as uid/gid 65534 with util-linux setpriv.
 */
describe('a mutating command without root in a root-owned sandbox', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let root: string;
  beforeAll(() => assertBuildCurrent());
  beforeEach(() => {
    scratch = makeScratch();
    root = join(scratch.root, 'host');
    writeExecutable(join(root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho 1.0.0\n');
    mkdirSync(join(root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' } }),
    );
    // Readable and searchable by anyone, writable by root only: mkdtemp makes the scratch 0700.
    chmodSync(scratch.root, 0o755);
    chmodSync(root, 0o755);
  });
  afterEach(() => scratch.cleanup());

  const lockStates: readonly (readonly [string, () => void])[] = [
    ['the lock directory is missing', () => undefined],
    ['the lock directory exists', () => mkdirSync(join(root, 'run'), { mode: 0o755 })],
    [
      'the lock file exists (0600)',
      () => {
        mkdirSync(join(root, 'run'), { mode: 0o755 });
        writeFileSync(join(root, 'run/aks-flex-node-agent-upgrade.lock'), '', { mode: 0o600 });
      },
    ],
  ];

  it.each(lockStates)('%s: migrate answers E_NOT_ROOT with exit 1 and changes nothing', (_name, prepare) => {
    prepare();
    const before = snapshotTree(root, []);
    const run = spawnSync(
      'setpriv',
      [
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        '--clear-groups',
        process.execPath,
        CLI,
        'migrate',
        '--root',
        root,
        '--json',
      ],
      {
        encoding: 'utf8',
        timeout: RUN_TIMEOUT_MS,
      },
    );
    const document = JSON.parse(run.stdout) as { ok: boolean; error?: { code: string } };
    expect({ status: run.status, ok: document.ok, code: document.error?.code }).toEqual({
      status: 1,
      ok: false,
      code: 'E_NOT_ROOT',
    });
    expect(snapshotTree(root, [])).toEqual(before);
  });
});
