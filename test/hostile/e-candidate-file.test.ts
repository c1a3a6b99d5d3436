import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { elfMachineFor } from '../../src/domain/node/artifact/elf.js';
import { concatBytes } from '../support/archive/index.js';
import {
  candidatePath,
  CountingRunner,
  elfHeader,
  inWitnessDir,
  ranMarker,
  refusedCandidate,
  scratchRoot,
  script,
  useCandidateScratch,
  writeCandidate,
} from './e-candidate-scratch.js';
import { ARCH, OTHER_ARCH } from './harness.js';

/**
 * Category E: candidate verification, with real processes in a scratch directory (the checks and
 * what they assert: e-candidate-scratch.ts).
 * Here: the file is not an executable for this host, or not a regular file at all.
 */

useCandidateScratch();

describe('E56 not an executable for this host → E_WRONG_ARCH, before it runs', () => {
  it('a shell script without allowScripts', async () => {
    writeCandidate(script('echo 1.2.3'));
    const runner = new CountingRunner();
    await refusedCandidate('E_WRONG_ARCH', { check: { allowScripts: false }, runner, ran: false });
    expect(runner.calls).toEqual([]);
  });

  const other = elfMachineFor(OTHER_ARCH);
  const mine = elfMachineFor(ARCH);
  it.each([
    [`a 64-bit ELF for ${OTHER_ARCH}`, () => elfHeader(other)],
    ['a 32-bit x86 ELF (EM_386)', () => elfHeader(3, { elfClass: 1 })],
    [`a 32-bit ELF claiming this host's machine`, () => elfHeader(mine, { elfClass: 1 })],
    [
      `this host's machine read in the wrong byte order (EI_DATA big-endian)`,
      () => {
        const header = elfHeader(mine);
        header[5] = 2;
        return header;
      },
    ],
    ['an ELF for RISC-V', () => elfHeader(243)],
    ['an ELF with an invalid class byte', () => elfHeader(mine, { elfClass: 3 })],
    ['an ELF header cut to 16 bytes', () => elfHeader(mine).subarray(0, 16)],
    [
      'a PE/COFF executable ("MZ")',
      () => new Uint8Array(Buffer.from('MZ\x90\x00\x03\x00\x00\x00 not a linux binary', 'latin1')),
    ],
    ['a Mach-O header', () => Uint8Array.of(0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1, 3, 0, 0, 0)],
    ['an empty file', () => new Uint8Array(0)],
    ['a script with a space before "#!"', () => new TextEncoder().encode(` ${script('echo 1.2.3')}`)],
    ['a script with a byte-order mark', () => new TextEncoder().encode(`\ufeff${script('echo 1.2.3')}`)],
  ])('%s', async (_name, content) => {
    writeCandidate(content());
    const runner = new CountingRunner();
    await refusedCandidate('E_WRONG_ARCH', { runner, ran: false });
    expect(runner.calls).toEqual([]);
  });

  it(`a 64-bit ELF header for this host (${ARCH}) with no program in it: the kernel refuses it → E_CANDIDATE_INVALID`, async () => {
    writeCandidate(elfHeader(mine));
    await inWitnessDir(() => refusedCandidate('E_CANDIDATE_INVALID'));
  });

  it('an ELF/shell polyglot (valid ELF ident and machine, then shell text) is never run by /bin/sh, even without allowScripts', async () => {
    // The kernel refuses the file (ENOEXEC); execvp(3) then retries it as a /bin/sh script.
    // Byte 18 is the machine (0x3e '>' on amd64), so the text goes on with a redirect target.
    const text = `/dev/null\n: > '${ranMarker()}'\necho 'aks-flex-node version v1.2.3'\nexit 0\n`;
    writeCandidate(concatBytes(elfHeader(mine).subarray(0, 20), new TextEncoder().encode(text)));
    await inWitnessDir(() => refusedCandidate('E_CANDIDATE_INVALID', { check: { allowScripts: false }, ran: false }));
  });
});

describe('E not a regular executable file → E_CANDIDATE_INVALID, before it runs', () => {
  it('a script without the execute bits', async () => {
    writeCandidate(script('echo 1.2.3'), 0o644);
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('a directory', async () => {
    mkdirSync(candidatePath(), { recursive: true });
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('a missing path', async () => {
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('a dangling symlink', async () => {
    mkdirSync(join(scratchRoot(), 'slot'));
    symlinkSync(join(scratchRoot(), 'nowhere'), candidatePath());
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('a symlink to a directory', async () => {
    mkdirSync(join(scratchRoot(), 'slot'));
    symlinkSync('/', candidatePath());
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('a symlink loop', async () => {
    mkdirSync(join(scratchRoot(), 'slot'));
    symlinkSync(candidatePath(), candidatePath());
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('an executable FIFO (never opened, so nothing blocks)', async () => {
    mkdirSync(join(scratchRoot(), 'slot'));
    expect(spawnSync('mkfifo', ['-m', '755', candidatePath()]).status).toBe(0);
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false, withinMs: 1000 });
  });
});
