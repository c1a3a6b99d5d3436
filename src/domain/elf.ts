import { fail, ok, type Result } from './failure.js';
import type { HostArchitecture } from './archive-rules.js';

/** How many leading bytes of a candidate the ELF check reads. */
export const ELF_PROBE_BYTES = 64;

const EM_X86_64 = 62;
const EM_AARCH64 = 183;

export type ExecutableFormat =
  | { readonly kind: 'elf'; readonly machine: number; readonly bits: 32 | 64 }
  | { readonly kind: 'script' }
  | { readonly kind: 'unknown' };

/** Identifies an executable from its first bytes (ELF header fields e_ident and e_machine). */
export function identifyExecutable(head: Uint8Array): ExecutableFormat {
  if (head.length >= 2 && head[0] === 0x23 && head[1] === 0x21) return { kind: 'script' };
  if (head.length < 20 || head[0] !== 0x7f || head[1] !== 0x45 || head[2] !== 0x4c || head[3] !== 0x46) return { kind: 'unknown' };
  const elfClass = head[4];
  const dataEncoding = head[5];
  if ((elfClass !== 1 && elfClass !== 2) || (dataEncoding !== 1 && dataEncoding !== 2)) return { kind: 'unknown' };
  const low = head[18] ?? 0;
  const high = head[19] ?? 0;
  const machine = dataEncoding === 1 ? low | (high << 8) : (low << 8) | high;
  return { kind: 'elf', machine, bits: elfClass === 1 ? 32 : 64 };
}

export function elfMachineFor(arch: HostArchitecture): number {
  return arch === 'amd64' ? EM_X86_64 : EM_AARCH64;
}

/**
 * The candidate must be a 64-bit ELF for this host's machine, so a binary for the wrong
 * architecture is refused before it is ever run. Scripts pass only when allowed (test agents).
 */
export function checkExecutableFormat(format: ExecutableFormat, arch: HostArchitecture, allowScripts: boolean): Result<ExecutableFormat> {
  switch (format.kind) {
    case 'script':
      return allowScripts ? ok(format) : fail('E_WRONG_ARCH', 'the candidate is a script; set agent.allowScripts to accept scripts');
    case 'unknown':
      return fail('E_WRONG_ARCH', 'the candidate is not an ELF executable');
    case 'elf':
      if (format.bits !== 64 || format.machine !== elfMachineFor(arch)) {
        return fail('E_WRONG_ARCH', `the candidate is built for ELF machine ${format.machine} (${format.bits}-bit), not this ${arch} host`);
      }
      return ok(format);
  }
}
