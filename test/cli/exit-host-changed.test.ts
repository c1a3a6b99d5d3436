import { describe, expect, it } from 'vitest';
import { MemoryFileSystem, type TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryHostLock } from '../../src/adapters/node/memory/memory-host-lock.js';
import { runCliInMemory } from '../support/run-cli.js';

const CONFIG_FILE = '/etc/aks-flex-node/agent-upgrade.json';
const LEGACY: TreeSpec = {
  [CONFIG_FILE]: {
    file: JSON.stringify({
      service: { manager: 'none' },
      container: { manager: 'none' },
      cluster: { manager: 'none' },
    }),
    mode: 0o600,
  },
  '/usr/local/bin/aks-flex-node': { file: '#!/bin/sh\necho v1.0.0\n', mode: 0o755 },
};

/** `migrate` of a legacy host through the CLI, on the memory filesystem, with a fault at op `at` (or none). */
async function migrateWithFaultAt(at: number | null): Promise<{
  exitCode: number;
  error: { code: string; hostChanged?: boolean } | undefined;
  changed: boolean;
  opCount: number;
}> {
  const fs = MemoryFileSystem.fromTree(LEGACY);
  const before = JSON.stringify(fs.snapshot());
  const first = fs.opCount;
  if (at !== null) fs.failAt(first + at, 'EIO');
  const run = await runCliInMemory(['migrate', '--json'], {
    overrides: { fileSystem: fs, hostLock: new MemoryHostLock() },
  });
  const doc = JSON.parse(run.stdout) as { error?: { code: string; hostChanged?: boolean } };
  return {
    exitCode: run.exitCode,
    error: doc.error,
    changed: JSON.stringify(fs.snapshot()) !== before,
    opCount: fs.opCount - first,
  };
}

/**
 * The CLI's side of "exit codes tell whether the host changed": a failure before the first
 * change is exit 1 without `hostChanged`; one after it is exit 5 with `"hostChanged": true`.
 */
describe('exit 5 when the host changed before a failure', () => {
  it('a fault at the first op: exit 1, E_IO, nothing changed', async () => {
    expect(await migrateWithFaultAt(0)).toMatchObject({ exitCode: 1, error: { code: 'E_IO' }, changed: false });
    expect((await migrateWithFaultAt(0)).error?.hostChanged).toBeUndefined();
  });

  it('a fault at the last op: exit 5, E_IO, "hostChanged": true, and the host did change', async () => {
    const free = await migrateWithFaultAt(null);
    expect(free.exitCode).toBe(0);
    expect(await migrateWithFaultAt(free.opCount - 1)).toMatchObject({
      exitCode: 5,
      error: { code: 'E_IO', hostChanged: true },
      changed: true,
    });
  });
});
