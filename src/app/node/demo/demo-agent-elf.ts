/**
 * The demo's agent: a real, static x86-64 Linux executable of a few hundred bytes, written here
 * rather than compiled, so the demo needs no compiler. `<agent> version` prints
 * `demo-agent version <v>`; any other first argument runs as a daemon (pause() until a signal),
 * or — the broken releases — exits 1 at once, or after sleeping 4 s. Health checks see a real ELF
 * in a slot as the main process's executable, exactly as with the production agent.
 */
const BASE_ADDRESS = 0x400000;
const HEADERS_BYTES = 64 + 56;

export type DemoBehaviour = 'healthy' | 'crash-on-start' | 'crash-later';

/** How long a `crash-later` agent runs before it exits 1: past the demo's 1.5 s stability gate. */
export const CRASH_LATER_SECONDS = 4;

export function demoAgentElf(version: string, behaviour: DemoBehaviour): Uint8Array {
  const message = Buffer.from(`demo-agent version ${version}\n`, 'latin1');
  return elfImage(agentCode(message.length, behaviour), message);
}

const EXIT_1: readonly (readonly number[])[] = [
  [0xbf, 0x01, 0x00, 0x00, 0x00], // mov edi, 1
  [0xb8, 0x3c, 0x00, 0x00, 0x00], // mov eax, 60             ; exit(1)
  [0x0f, 0x05], // syscall
];

/** What the agent does, one instruction (or datum) per row. */
const AGENT: Readonly<Record<DemoBehaviour, readonly (readonly number[])[]>> = {
  healthy: [
    [0xb8, 0x22, 0x00, 0x00, 0x00], // mov eax, 34             ; pause
    [0x0f, 0x05], // syscall
    [0xeb, 0xf7], // jmp agent
  ],
  'crash-on-start': EXIT_1,
  'crash-later': [
    [0x48, 0x8d, 0x3d, 0x15, 0x00, 0x00, 0x00], // lea rdi, [rip+21]       ; the timespec below
    [0x31, 0xf6], // xor esi, esi
    [0xb8, 0x23, 0x00, 0x00, 0x00], // mov eax, 35             ; nanosleep
    [0x0f, 0x05], // syscall
    ...EXIT_1,
    [CRASH_LATER_SECONDS, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], // { tv_sec, tv_nsec }
  ],
};

/** The program: `version` writes the message that follows the code; anything else is the agent. */
function agentCode(messageBytes: number, behaviour: DemoBehaviour): Buffer {
  // The rows after the message's lea, up to the agent; the lea skips them and the agent.
  const afterLea: readonly (readonly number[])[] = [
    [0xba, messageBytes, 0x00, 0x00, 0x00], // mov edx, length
    [0x0f, 0x05], // syscall
    [0x31, 0xff], // xor edi, edi
    [0xb8, 0x3c, 0x00, 0x00, 0x00], // mov eax, 60             ; exit(0)
    [0x0f, 0x05], // syscall
  ];
  const agent = AGENT[behaviour];
  const toMessage = [...afterLea, ...agent].flat().length;
  // The jump offsets count the bytes of the rows below them, up to the agent (offset 53).
  const instructions: readonly (readonly number[])[] = [
    [0x48, 0x8b, 0x04, 0x24], // mov rax, [rsp]          ; argc
    [0x48, 0x83, 0xf8, 0x02], // cmp rax, 2
    [0x7c, 0x2b], // jl agent
    [0x48, 0x8b, 0x74, 0x24, 0x10], // mov rsi, [rsp+16]       ; argv[1]
    [0x80, 0x3e, 0x76], // cmp byte [rsi], 'v'
    [0x75, 0x21], // jne agent
    [0xb8, 0x01, 0x00, 0x00, 0x00], // mov eax, 1              ; write
    [0xbf, 0x01, 0x00, 0x00, 0x00], // mov edi, 1              ; stdout
    [0x48, 0x8d, 0x35, toMessage, 0x00, 0x00, 0x00], // lea rsi, [rip+toMessage] ; the message
    ...afterLea,
    ...agent,
  ];
  return Buffer.from(instructions.flat());
}

/** A minimal ELF executable: the ELF header, one program header, then `code` and `message`. */
function elfImage(code: Buffer, message: Buffer): Buffer {
  const size = HEADERS_BYTES + code.length + message.length;
  const elf = Buffer.alloc(size);
  // ELF header: 64-bit, little-endian, current version, System V, executable for x86-64.
  elf.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0);
  elf.writeUInt16LE(2, 16); // e_type ET_EXEC
  elf.writeUInt16LE(0x3e, 18); // e_machine EM_X86_64
  elf.writeUInt32LE(1, 20); // e_version
  elf.writeBigUInt64LE(BigInt(BASE_ADDRESS + HEADERS_BYTES), 24); // e_entry
  elf.writeBigUInt64LE(64n, 32); // e_phoff
  elf.writeUInt16LE(64, 52); // e_ehsize
  elf.writeUInt16LE(56, 54); // e_phentsize
  elf.writeUInt16LE(1, 56); // e_phnum
  elf.writeUInt16LE(64, 58); // e_shentsize (no sections)
  // One PT_LOAD of the whole file, read + execute.
  elf.writeUInt32LE(1, 64);
  elf.writeUInt32LE(5, 68);
  elf.writeBigUInt64LE(0n, 72);
  elf.writeBigUInt64LE(BigInt(BASE_ADDRESS), 80);
  elf.writeBigUInt64LE(BigInt(BASE_ADDRESS), 88);
  elf.writeBigUInt64LE(BigInt(size), 96);
  elf.writeBigUInt64LE(BigInt(size), 104);
  elf.writeBigUInt64LE(0x1000n, 112);
  code.copy(elf, HEADERS_BYTES);
  message.copy(elf, HEADERS_BYTES + code.length);
  return elf;
}
