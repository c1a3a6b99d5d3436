import { describe, expect, it } from 'vitest';
import {
  checkExecutableFormat,
  ELF_PROBE_BYTES,
  elfMachineFor,
  identifyExecutable,
  programHeadersBeyond,
} from '../../src/domain/node/artifact/elf.js';

/** A minimal but loadable 64-bit ELF header with one PT_LOAD program header (little endian by default). */
function elf(machine: number, bits: 1 | 2 = 2, encoding: 1 | 2 = 1): Uint8Array {
  const head = new Uint8Array(64 + 56);
  const view = new DataView(head.buffer);
  const little = encoding === 1;
  head.set([0x7f, 0x45, 0x4c, 0x46, bits, encoding, 1]);
  view.setUint16(16, 2, little);
  view.setUint16(18, machine, little);
  view.setUint32(20, 1, little);
  view.setBigUint64(32, 64n, little);
  view.setUint16(52, 64, little);
  view.setUint16(54, 56, little);
  view.setUint16(56, 1, little);
  view.setUint32(64, 1, little);
  return head;
}

function patched(head: Uint8Array, offset: number, bytes: readonly number[]): Uint8Array {
  const copy = Uint8Array.from(head);
  copy.set(bytes, offset);
  return copy;
}

describe('identifyExecutable', () => {
  it.each([
    ['x86-64 little endian', elf(62), { kind: 'elf', machine: 62, bits: 64, problem: null }],
    ['aarch64', elf(183), { kind: 'elf', machine: 183, bits: 64, problem: null }],
    ['big endian', elf(183, 2, 2), { kind: 'elf', machine: 183, bits: 64, problem: null }],
    ['32-bit', elf(3, 1), { kind: 'elf', machine: 3, bits: 32, problem: null }],
    ['a script', new TextEncoder().encode('#!/bin/sh\n'), { kind: 'script' }],
    ['a zip', Uint8Array.from([0x50, 0x4b, 3, 4]), { kind: 'unknown' }],
    ['a truncated ELF header', elf(62).subarray(0, 10), { kind: 'unknown' }],
    [
      'an ELF with a bad class',
      (() => {
        const h = elf(62);
        h[4] = 9;
        return h;
      })(),
      { kind: 'unknown' },
    ],
    ['nothing', new Uint8Array(), { kind: 'unknown' }],
  ])('%s', (_name, head, expected) => {
    expect(identifyExecutable(head)).toEqual(expected);
  });
});

describe('checkExecutableFormat', () => {
  it.each([
    ['amd64 binary on amd64', elf(62), 'amd64', false, null],
    ['arm64 binary on arm64', elf(183), 'arm64', false, null],
    ['arm64 binary on amd64', elf(183), 'amd64', false, 'E_WRONG_ARCH'],
    ['amd64 binary on arm64', elf(62), 'arm64', false, 'E_WRONG_ARCH'],
    ['32-bit x86 on amd64', elf(62, 1), 'amd64', false, 'E_WRONG_ARCH'],
    ['a script when scripts are not allowed', new TextEncoder().encode('#!/bin/sh'), 'amd64', false, 'E_WRONG_ARCH'],
    ['a script when scripts are allowed', new TextEncoder().encode('#!/bin/sh'), 'amd64', true, null],
    ['garbage even when scripts are allowed', new TextEncoder().encode('MZ'), 'amd64', true, 'E_WRONG_ARCH'],
    ['a relocatable object, not an executable', patched(elf(62), 16, [1, 0]), 'amd64', false, 'E_CANDIDATE_INVALID'],
    ['a wrong ELF version', patched(elf(62), 20, [2, 0, 0, 0]), 'amd64', false, 'E_CANDIDATE_INVALID'],
    ['a wrong program header size', patched(elf(62), 54, [32, 0]), 'amd64', false, 'E_CANDIDATE_INVALID'],
    ['no program headers', patched(elf(62), 56, [0, 0]), 'amd64', false, 'E_CANDIDATE_INVALID'],
    ['program headers past the end of the file', patched(elf(62), 56, [9, 0]), 'amd64', false, 'E_CANDIDATE_INVALID'],
    ['no loadable segment', patched(elf(62), 64, [6, 0, 0, 0]), 'amd64', false, 'E_CANDIDATE_INVALID'],
    [
      'only the ELF ident and machine (a shell polyglot)',
      elf(62).subarray(0, 20),
      'amd64',
      false,
      'E_CANDIDATE_INVALID',
    ],
    [
      'a polyglot for another machine is still a wrong-architecture file',
      elf(183).subarray(0, 20),
      'amd64',
      false,
      'E_WRONG_ARCH',
    ],
  ] as const)('%s', (_name, head, arch, allowScripts, code) => {
    const verdict = checkExecutableFormat(identifyExecutable(head), arch, allowScripts);
    expect(verdict.ok ? null : verdict.failure.code).toBe(code);
  });

  it('knows the two release machines', () => {
    expect([elfMachineFor('amd64'), elfMachineFor('arm64')]).toEqual([62, 183]);
  });
});

describe('program headers stored after the probed bytes (a single executable built by postject)', () => {
  /** A minimal valid ELF64 whose program header table sits at the end of a 10 KiB file. */
  function movedTableElf(phnum = 1): Uint8Array {
    const size = 10_240;
    const elf = new Uint8Array(size + phnum * 56);
    const view = new DataView(elf.buffer);
    elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
    view.setUint16(16, 2, true);
    view.setUint16(18, 62, true);
    view.setUint32(20, 1, true);
    view.setBigUint64(32, BigInt(size), true);
    view.setUint16(52, 64, true);
    view.setUint16(54, 56, true);
    view.setUint16(56, phnum, true);
    view.setUint32(size, 1, true); // the first entry is PT_LOAD
    return elf;
  }

  it('names the table to read, and accepts the ELF once it is read', () => {
    const elf = movedTableElf();
    const head = elf.subarray(0, ELF_PROBE_BYTES);
    expect(programHeadersBeyond(head)).toEqual({ offset: 10_240, bytes: 56 });
    expect(identifyExecutable(head, elf.length)).toMatchObject({
      kind: 'elf',
      problem: 'the ELF program headers lie beyond the probed bytes',
    });
    expect(identifyExecutable(head, elf.length, elf.subarray(10_240))).toMatchObject({
      kind: 'elf',
      machine: 62,
      problem: null,
    });
  });

  it('refuses a table without a loadable segment, a short read, and a table the kernel would refuse as too large', () => {
    const elf = movedTableElf();
    const head = elf.subarray(0, ELF_PROBE_BYTES);
    const notLoad = elf.slice(10_240);
    notLoad[0] = 4;
    expect(
      identifyExecutable(head, elf.length, notLoad).kind === 'elf' && identifyExecutable(head, elf.length, notLoad),
    ).toMatchObject({ problem: 'the ELF file has no loadable segment' });
    expect(identifyExecutable(head, elf.length, elf.subarray(10_240, 10_250))).toMatchObject({
      problem: 'the ELF program headers lie beyond the probed bytes',
    });
    const huge = movedTableElf(1_200);
    expect(programHeadersBeyond(huge.subarray(0, ELF_PROBE_BYTES))).toBeNull();
    expect(identifyExecutable(huge.subarray(0, ELF_PROBE_BYTES), huge.length)).toMatchObject({
      problem: 'the ELF program header table is too large',
    });
  });
});
