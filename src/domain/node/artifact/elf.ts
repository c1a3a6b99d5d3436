import { fail, ok, type Result } from '../../common/failure.js';
import type { HostArchitecture } from './archive-rules.js';

/** How many leading bytes of a candidate the ELF check reads: the header and program headers. */
export const ELF_PROBE_BYTES = 4096;

const EM_X86_64 = 62;
const EM_AARCH64 = 183;
const ET_EXEC = 2;
const ET_DYN = 3;
const PT_LOAD = 1;
const ELF64_HEADER_BYTES = 64;
const ELF64_PROGRAM_HEADER_BYTES = 56;
const PROGRAM_HEADERS_MAX_BYTES = 65_536;

export type ExecutableFormat =
  /**
   * `problem`: why the kernel would refuse this ELF — and exec would then run the file with
   * /bin/sh — or `null` when it passes the loader's checks.
   */
  | { readonly kind: 'elf'; readonly machine: number; readonly bits: 32 | 64; readonly problem: string | null }
  | { readonly kind: 'script' }
  | { readonly kind: 'unknown' };

/**
 * Identifies an executable from its first bytes. An ELF is checked as far as the kernel's ELF
 * loader checks it before running anything — header fields, and a program header table that
 * lies inside the file and has a loadable segment — because exec falls back to `/bin/sh` for a
 * file the kernel refuses, so a half-valid ELF with shell text after it would run as a script.
 */
export function identifyExecutable(
  head: Uint8Array,
  fileBytes: number = head.length,
  programHeaders?: Uint8Array,
): ExecutableFormat {
  if (head.length >= 2 && head[0] === 0x23 && head[1] === 0x21) return { kind: 'script' };
  if (head.length < 20 || head[0] !== 0x7f || head[1] !== 0x45 || head[2] !== 0x4c || head[3] !== 0x46)
    return { kind: 'unknown' };
  const elfClass = head[4];
  const dataEncoding = head[5];
  if ((elfClass !== 1 && elfClass !== 2) || (dataEncoding !== 1 && dataEncoding !== 2)) return { kind: 'unknown' };
  const read = (offset: number, bytes: number): number => readInteger(head, offset, bytes, dataEncoding === 1);
  const machine = read(18, 2);
  const bits = elfClass === 1 ? 32 : 64;
  return {
    kind: 'elf',
    machine,
    bits,
    problem: bits === 64 ? elf64Problem(head, fileBytes, read, programHeaders) : null,
  };
}

/**
 * Where a 64-bit ELF's program header table lies when it is not inside `head` (a single
 * executable built by postject moves it to the end of the file), so the caller can read it;
 * `null` when `head` already holds it or the file is not such an ELF.
 */
export function programHeadersBeyond(head: Uint8Array): { readonly offset: number; readonly bytes: number } | null {
  if (
    head.length < ELF64_HEADER_BYTES ||
    head[0] !== 0x7f ||
    head[1] !== 0x45 ||
    head[2] !== 0x4c ||
    head[3] !== 0x46 ||
    head[4] !== 2
  )
    return null;
  if (head[5] !== 1 && head[5] !== 2) return null;
  const read = (offset: number, bytes: number): number => readInteger(head, offset, bytes, head[5] === 1);
  const offset = read(32, 8);
  const bytes = read(56, 2) * ELF64_PROGRAM_HEADER_BYTES;
  return offset + bytes > head.length && bytes > 0 && bytes <= PROGRAM_HEADERS_MAX_BYTES ? { offset, bytes } : null;
}

function elf64Problem(
  head: Uint8Array,
  fileBytes: number,
  read: (offset: number, bytes: number) => number,
  programHeaders: Uint8Array | undefined,
): string | null {
  if (head.length < ELF64_HEADER_BYTES) return 'the ELF header is truncated';
  if (head[6] !== 1 || read(20, 4) !== 1) return 'the ELF version is not 1';
  const type = read(16, 2);
  if (type !== ET_EXEC && type !== ET_DYN) return 'the ELF file is not an executable';
  if (read(52, 2) !== ELF64_HEADER_BYTES || read(54, 2) !== ELF64_PROGRAM_HEADER_BYTES)
    return 'the ELF header sizes are wrong';
  const phoff = read(32, 8);
  const phnum = read(56, 2);
  const tableEnd = phoff + phnum * ELF64_PROGRAM_HEADER_BYTES;
  if (phnum < 1 || phoff < ELF64_HEADER_BYTES || tableEnd > fileBytes)
    return 'the ELF program headers are missing or outside the file';
  // The kernel refuses a program header table above 64 KiB.
  if (phnum * ELF64_PROGRAM_HEADER_BYTES > PROGRAM_HEADERS_MAX_BYTES)
    return 'the ELF program header table is too large';
  const inHead = tableEnd <= head.length;
  const table = inHead ? head.subarray(phoff, tableEnd) : programHeaders;
  if (table === undefined || table.length !== phnum * ELF64_PROGRAM_HEADER_BYTES)
    return 'the ELF program headers lie beyond the probed bytes';
  const littleEndian = head[5] === 1;
  for (let index = 0; index < phnum; index += 1) {
    if (readInteger(table, index * ELF64_PROGRAM_HEADER_BYTES, 4, littleEndian) === PT_LOAD) return null;
  }
  return 'the ELF file has no loadable segment';
}

function readInteger(bytes: Uint8Array, offset: number, length: number, littleEndian: boolean): number {
  let value = 0;
  for (let index = 0; index < length; index += 1) {
    const byte = bytes[littleEndian ? offset + length - 1 - index : offset + index] ?? 0;
    value = value * 256 + byte;
  }
  return value;
}

export function elfMachineFor(arch: HostArchitecture): number {
  return arch === 'amd64' ? EM_X86_64 : EM_AARCH64;
}

/**
 * The candidate must be a 64-bit ELF for this host's machine, so a binary for the wrong
 * architecture is refused before it is ever run. Scripts pass only when allowed (test agents).
 */
export function checkExecutableFormat(
  format: ExecutableFormat,
  arch: HostArchitecture,
  allowScripts: boolean,
): Result<ExecutableFormat> {
  switch (format.kind) {
    case 'script':
      return allowScripts
        ? ok(format)
        : fail('E_WRONG_ARCH', 'the candidate is a script; set agent.allowScripts to accept scripts');
    case 'unknown':
      return fail('E_WRONG_ARCH', 'the candidate is not an ELF executable');
    case 'elf':
      if (format.bits !== 64 || format.machine !== elfMachineFor(arch)) {
        return fail(
          'E_WRONG_ARCH',
          `the candidate is built for ELF machine ${format.machine} (${format.bits}-bit), not this ${arch} host`,
        );
      }
      if (format.problem !== null)
        return fail('E_CANDIDATE_INVALID', `the candidate is not a valid ELF executable: ${format.problem}`);
      return ok(format);
  }
}
