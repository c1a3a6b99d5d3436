import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { FileSystemError } from '../../src/domain/common/port-errors.js';
import { RecordStore } from '../../src/app/node/record/record-store.js';
import { StateStore } from '../../src/app/node/state/state-store.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

/** Every wait in this file is bounded: a read that blocks on a FIFO fails the test instead of hanging it. */
const BOUND_MS = 5_000;

function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${BOUND_MS} ms`)), BOUND_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function mkfifo(path: string): void {
  expect(spawnSync('mkfifo', [path]).status).toBe(0);
}

/** Opens each FIFO for writing once, so a reader that did block (the defect) is released. */
function releaseReaders(fifos: readonly string[]): void {
  for (const fifo of fifos) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // ENXIO: nobody is reading, which is what a correct adapter leaves behind.
    }
  }
}

const RECORD = 'etc/aks-flex-node/agent-upgrade-signal.json';
const STATE = 'etc/aks-flex-node/agent-upgrade-state.json';
const OVERSIZED = 'x'.repeat(64 * 1024 + 1);

type Plant = (path: string) => void;

interface StatusDocument {
  readonly ok: boolean;
  readonly error?: { readonly code: string };
  readonly status: {
    readonly layout: { readonly problem: { readonly code: string } | null };
    readonly record: { readonly problem?: { readonly code: string } };
    readonly state: { readonly problem?: { readonly code: string } };
  };
}

/** The error status reports: the layout's problem first, then the record's, then the state's. */
function blockingCode(document: StatusDocument): string | undefined {
  return (
    document.status.layout.problem?.code ?? document.status.record.problem?.code ?? document.status.state.problem?.code
  );
}
const plants: ReadonlyArray<readonly [string, Plant]> = [
  ['a FIFO', mkfifo],
  ['a symlink to /dev/zero', (path) => symlinkSync('/dev/zero', path)],
  ['a file over 64 KiB', (path) => writeFileSync(path, OVERSIZED)],
];

describe('status when the upgrade record or the state file is not a usable file', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const fifos: string[] = [];
  beforeEach(() => {
    scratch = makeScratch();
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' } }),
    );
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
  });
  afterEach(() => {
    releaseReaders(fifos.splice(0));
    scratch.cleanup();
  });

  const plant = (relative: string, how: Plant): void => {
    const path = join(scratch.root, relative);
    how(path);
    if (how === mkfifo) fifos.push(path);
  };

  it.each(plants)(
    'reports a record that is %s as invalid (E_RECORD), exits 1 with the whole report and leaves it in place',
    async (_name, how) => {
      plant(RECORD, how);
      const before = snapshotTree(scratch.root);
      const run = await within(runCliInMemory(['status', '--root', scratch.root, '--json']), 'status');
      const report = JSON.parse(run.stdout) as StatusDocument;
      expect({ exitCode: run.exitCode, ok: report.ok, code: report.error?.code }).toEqual({
        exitCode: 1,
        ok: false,
        code: blockingCode(report),
      });
      expect(report.status.record).toMatchObject({ present: true, valid: false, problem: { code: 'E_RECORD' } });
      expect(snapshotTree(scratch.root)).toEqual(before);
    },
  );

  it.each(plants)(
    'reports a host whose state file is %s (E_STATE), exits 1 with the whole report and leaves it in place',
    async (_name, how) => {
      plant(STATE, how);
      const before = snapshotTree(scratch.root);
      const run = await within(runCliInMemory(['status', '--root', scratch.root, '--json']), 'status');
      const report = JSON.parse(run.stdout) as StatusDocument;
      expect({ exitCode: run.exitCode, ok: report.ok, code: report.error?.code }).toEqual({
        exitCode: 1,
        ok: false,
        code: blockingCode(report),
      });
      expect(report.status.state).toMatchObject({ problem: { code: 'E_STATE' } });
      expect(snapshotTree(scratch.root)).toEqual(before);
    },
  );

  it('prints the text form for a FIFO record, then the error, and exits 1', async () => {
    plant(RECORD, mkfifo);
    const run = await within(runCliInMemory(['status', '--root', scratch.root]), 'status');
    // The same host without the FIFO, for the length of a whole report.
    rmSync(join(scratch.root, RECORD));
    const healthy = await within(runCliInMemory(['status', '--root', scratch.root]), 'status');
    expect({
      exitCode: run.exitCode,
      reportLines: run.stdout.trim().split('\n').length,
      errorLines: run.stderr.trim().split('\n').length,
    }).toEqual({
      exitCode: 1,
      reportLines: healthy.stdout.trim().split('\n').length,
      errorLines: 1,
    });
  });

  it.each(plants)('the record and state stores refuse %s with E_RECORD and E_STATE', async (_name, how) => {
    plant(RECORD, how);
    plant(STATE, how);
    const fs = new NodeFileSystem();
    const record = await within(new RecordStore(fs, join(scratch.root, RECORD)).read(), 'record read');
    const state = await within(new StateStore(fs, join(scratch.root, STATE)).read(), 'state read');
    expect([record.ok ? null : record.failure.code, state.ok ? null : state.failure.code]).toEqual([
      'E_RECORD',
      'E_STATE',
    ]);
  });
});

describe('NodeFileSystem.readFile on what is not a regular file', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const fifos: string[] = [];
  const fs = new NodeFileSystem();
  beforeEach(() => {
    scratch = makeScratch();
  });
  afterEach(() => {
    releaseReaders(fifos.splice(0));
    scratch.cleanup();
  });

  const codeOf = async (read: Promise<unknown>): Promise<string> => {
    const error = await within(read, 'readFile').then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(FileSystemError);
    return (error as FileSystemError).code;
  };

  it('refuses a FIFO (ENOTREG) without waiting for a writer, directly or through a link, and ELOOP for the link when not following', async () => {
    const fifo = join(scratch.root, 'fifo');
    mkfifo(fifo);
    fifos.push(fifo);
    symlinkSync('fifo', join(scratch.root, 'link'));
    expect(await codeOf(fs.readFile(fifo, 100))).toBe('ENOTREG');
    expect(await codeOf(fs.readFile(join(scratch.root, 'link'), 100))).toBe('ENOTREG');
    expect(await codeOf(fs.readFile(join(scratch.root, 'link'), 100, { followLinks: false }))).toBe('ELOOP');
  });

  it('refuses a character device (ENOTREG) reached through a link, so /dev/zero is never read', async () => {
    symlinkSync('/dev/zero', join(scratch.root, 'zero'));
    expect(await codeOf(fs.readFile(join(scratch.root, 'zero'), 100))).toBe('ENOTREG');
    expect(await codeOf(fs.readFile('/dev/null', 100))).toBe('ENOTREG');
  });

  it('stops at the bound on a file whose size says 0 but whose content is longer (procfs)', async () => {
    // /proc/self/maps reports size 0 and always holds more than 16 bytes.
    expect(await codeOf(fs.readFile('/proc/self/maps', 16))).toBe('ETOOBIG');
  });
});
