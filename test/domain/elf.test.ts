import { describe, expect, it } from 'vitest';
import { checkExecutableFormat, elfMachineFor, identifyExecutable } from '../../src/domain/elf.js';

function elf(machine: number, bits: 1 | 2 = 2, encoding: 1 | 2 = 1): Uint8Array {
  const head = new Uint8Array(64);
  head.set([0x7f, 0x45, 0x4c, 0x46, bits, encoding, 1]);
  if (encoding === 1) head.set([machine & 0xff, machine >> 8], 18);
  else head.set([machine >> 8, machine & 0xff], 18);
  return head;
}

describe('identifyExecutable', () => {
  it.each([
    ['x86-64 little endian', elf(62), { kind: 'elf', machine: 62, bits: 64 }],
    ['aarch64', elf(183), { kind: 'elf', machine: 183, bits: 64 }],
    ['big endian', elf(183, 2, 2), { kind: 'elf', machine: 183, bits: 64 }],
    ['32-bit', elf(3, 1), { kind: 'elf', machine: 3, bits: 32 }],
    ['a script', new TextEncoder().encode('#!/bin/sh\n'), { kind: 'script' }],
    ['a zip', Uint8Array.from([0x50, 0x4b, 3, 4]), { kind: 'unknown' }],
    ['a truncated ELF header', elf(62).subarray(0, 10), { kind: 'unknown' }],
    ['an ELF with a bad class', (() => { const h = elf(62); h[4] = 9; return h; })(), { kind: 'unknown' }],
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
  ] as const)('%s', (_name, head, arch, allowScripts, code) => {
    const verdict = checkExecutableFormat(identifyExecutable(head), arch, allowScripts);
    expect(verdict.ok ? null : verdict.failure.code).toBe(code);
  });

  it('knows the two release machines', () => {
    expect([elfMachineFor('amd64'), elfMachineFor('arm64')]).toEqual([62, 183]);
  });
});
