import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readSync, closeSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const EM_AARCH64 = 183;
/** Debian's user-mode emulator and the arm64 C and C++ libraries it loads (installed by .ci/run). */
const QEMU = '/usr/bin/qemu-aarch64-static';
const SYSROOT = '/usr/aarch64-linux-gnu';

function elfMachine(path: string): number {
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(20);
    readSync(fd, header, 0, 20, 0);
    return header.readUInt16LE(18);
  } finally {
    closeSync(fd);
  }
}

/**
 * The single executable for arm64, built on this amd64 machine: the registry's Node 24
 * for arm64 with the bundle injected, run under qemu's user-mode emulation.
 */
describe('npm run build:sea -- --arch arm64', () => {
  let dir: string;
  let binary: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sea-arm64-'));
    binary = join(dir, 'agent-upgrade');
    execFileSync(
      process.execPath,
      ['scripts/build-sea.mjs', '--arch', 'arm64', '--output', binary, '--version', '9.8.7'],
      {
        cwd: REPO,
        stdio: 'pipe',
        timeout: 240_000,
      },
    );
  }, 300_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is an aarch64 ELF', () => {
    expect(elfMachine(binary)).toBe(EM_AARCH64);
  });

  it('runs on arm64 (emulated) and reports its version', () => {
    const run = spawnSync(QEMU, ['-L', SYSROOT, binary, 'version'], { encoding: 'utf8', timeout: 120_000 });
    expect({ status: run.status, stdout: run.stdout.trim(), error: run.error?.message }).toEqual({
      status: 0,
      stdout: 'agent-upgrade 9.8.7',
      error: undefined,
    });
  }, 150_000);
});
