import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { NodeProcessRunner } from '../../src/adapters/common/runtime/node-process-runner.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import {
  type CandidateCheck,
  checkCandidate,
  type CheckedCandidate,
} from '../../src/app/node/artifact/check-candidate.js';
import { runUseCase } from '../../src/app/common/failure-signal.js';
import { elfMachineFor } from '../../src/domain/node/artifact/elf.js';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import type { Result } from '../../src/domain/common/failure.js';
import { sha256FromHex } from '../../src/domain/common/digest.js';
import { emptyUpgradeState, withQuarantined } from '../../src/domain/node/record/upgrade-state.js';
import { parseVersion, type Version } from '../../src/domain/common/version.js';
import type { Clock } from '../../src/ports/common/clock.js';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../src/ports/common/process-runner.js';
import { concatBytes } from '../support/archive/index.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { ARCH, eventually, filesContaining, newCanary, OTHER_ARCH } from './harness.js';

/**
 * Category E: candidate verification, with real processes in a scratch
 * directory. Each refusal asserts the code, that the scratch tree did not change, and that the
 * canary the candidate prints (built at run time by the shell, so the script text never holds
 * it) appears nowhere: not in the failure message, not in any file.
 */

let scratch: { root: string; cleanup(): void };
let witness: { root: string; cleanup(): void };
let canary: string;
beforeEach(() => {
  scratch = makeScratch('agent-upgrade-hostile-e-');
  witness = makeScratch('agent-upgrade-hostile-w-');
  canary = newCanary();
});
afterEach(() => {
  scratch.cleanup();
  witness.cleanup();
});

const candidatePath = (): string => join(scratch.root, 'slot', 'candidate');
const ranMarker = (): string => join(witness.root, 'ran');

/** A `/bin/sh` candidate that records it ran, prints the canary on both streams, then `body`. */
function script(body: string): string {
  const [head, tail] = [canary.slice(0, 3), canary.slice(3)];
  return `#!/bin/sh
: > '${ranMarker()}'
printf '%s%s\\n' '${head}' '${tail}'
printf '%s%s\\n' '${head}' '${tail}' >&2
${body}
`;
}

function writeCandidate(content: string | Uint8Array, mode = 0o755): string {
  const path = candidatePath();
  mkdirSync(join(scratch.root, 'slot'), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

/** A 64-byte ELF header: class (1 = 32-bit, 2 = 64-bit), data (1 = LE, 2 = BE), machine. */
function elfHeader(machine: number, options: { elfClass?: number; data?: number } = {}): Uint8Array {
  const b = new Uint8Array(64);
  b.set([0x7f, 0x45, 0x4c, 0x46, options.elfClass ?? 2, options.data ?? 1, 1, 0]);
  const le = (options.data ?? 1) === 1;
  const put16 = (at: number, v: number): void => {
    b[at] = le ? v & 0xff : v >> 8;
    b[at + 1] = le ? v >> 8 : v & 0xff;
  };
  put16(16, 2); // ET_EXEC
  put16(18, machine);
  b[le ? 20 : 23] = 1; // e_version
  return b;
}

const v = (text: string): Version => {
  const parsed = parseVersion(text);
  if (!parsed.ok) throw new Error(text);
  return parsed.value;
};

class CountingRunner implements ProcessRunner {
  readonly calls: RunRequest[] = [];
  constructor(private readonly inner: ProcessRunner = new NodeProcessRunner()) {}
  run(request: RunRequest): Promise<RunOutcome> {
    this.calls.push(request);
    return this.inner.run(request);
  }
}

/** A runner that replays outcomes, repeating the last one. */
class ScriptedRunner implements ProcessRunner {
  readonly calls: RunRequest[] = [];
  constructor(private readonly outcomes: readonly RunOutcome[]) {}
  run(request: RunRequest): Promise<RunOutcome> {
    this.calls.push(request);
    const next = this.outcomes[Math.min(this.calls.length - 1, this.outcomes.length - 1)];
    if (next === undefined) throw new Error('no outcome scripted');
    return Promise.resolve(next);
  }
}

/** Time moves only when the code under test sleeps. */
class TinyClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(private now = 1_700_000_000_000) {}
  nowMs(): number {
    return this.now;
  }
  monotonicMs(): number {
    return this.now;
  }
  sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.now += ms;
    return Promise.resolve();
  }
}

interface CheckOptions {
  readonly check?: Partial<CandidateCheck>;
  readonly runner?: ProcessRunner;
  readonly clock?: Clock;
}

async function runCheck(options: CheckOptions = {}): Promise<{ result: Result<CheckedCandidate>; elapsedMs: number }> {
  const started = performance.now();
  const result = await runUseCase(() =>
    checkCandidate(
      {
        fs: new NodeFileSystem(),
        runner: options.runner ?? new NodeProcessRunner(),
        clock: options.clock ?? new SystemClock(),
      },
      {
        path: candidatePath(),
        arch: ARCH,
        allowScripts: true,
        maxBinaryBytes: 1024 * 1024,
        requestedVersion: null,
        currentVersion: null,
        allowDowngrade: false,
        requestedBy: 'command',
        state: emptyUpgradeState(),
        force: false,
        versionTimeoutMs: 500,
        ...options.check,
      },
    ),
  );
  return { result, elapsedMs: performance.now() - started };
}

async function refusedCandidate(
  code: ErrorCode,
  options: CheckOptions & { withinMs?: number; ran?: boolean } = {},
): Promise<string> {
  const before = snapshotTree(scratch.root);
  const { result, elapsedMs } = await runCheck(options);
  expect(result.ok ? { code: null } : { code: result.failure.code, message: result.failure.message }).toMatchObject({
    code,
  });
  const message = result.ok ? '' : result.failure.message;
  expect(message.length).toBeGreaterThan(0);
  expect(snapshotTree(scratch.root)).toEqual(before);
  expect(message).not.toContain(canary);
  expect(filesContaining(scratch.root, canary)).toEqual([]);
  expect(filesContaining(witness.root, canary)).toEqual([]);
  if (options.ran !== undefined)
    expect(exists(ranMarker()), options.ran ? 'the candidate ran' : 'the candidate never ran').toBe(options.ran);
  expect(elapsedMs).toBeLessThan(options.withinMs ?? 3000);
  return message;
}

async function acceptedCandidate(
  version: string,
  options: CheckOptions & { withinMs?: number } = {},
): Promise<CheckedCandidate> {
  const before = snapshotTree(scratch.root);
  const { result, elapsedMs } = await runCheck(options);
  expect(result.ok ? { code: null } : { code: result.failure.code, message: result.failure.message }).toEqual({
    code: null,
  });
  if (!result.ok) throw new Error('unreachable');
  expect(result.value.version).toEqual(v(version));
  expect(snapshotTree(scratch.root)).toEqual(before);
  expect(JSON.stringify(result.value)).not.toContain(canary);
  expect(elapsedMs).toBeLessThan(options.withinMs ?? 3000);
  return result.value;
}

/**
 * Runs `body` with the witness directory as the working directory, so anything a candidate that
 * wrongly gets run by a shell writes to relative paths lands there, not in the repository.
 */
async function inWitnessDir<T>(body: () => Promise<T>): Promise<T> {
  const previous = process.cwd();
  process.chdir(witness.root);
  try {
    return await body();
  } finally {
    process.chdir(previous);
  }
}

function exists(path: string): boolean {
  try {
    readFileSync(path);
    return true;
  } catch {
    return false;
  }
}

/** True while `pid` exists and is not a zombie (an exited child its parent has not reaped yet). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function describeProcess(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return `${pid}: gone`;
  }
}

function readPid(name: string): number {
  const pid = Number(readFileSync(join(witness.root, name), 'utf8').trim());
  expect(Number.isSafeInteger(pid) && pid > 1).toBe(true);
  return pid;
}

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
    mkdirSync(join(scratch.root, 'slot'));
    symlinkSync(join(scratch.root, 'nowhere'), candidatePath());
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('a symlink to a directory', async () => {
    mkdirSync(join(scratch.root, 'slot'));
    symlinkSync('/', candidatePath());
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('a symlink loop', async () => {
    mkdirSync(join(scratch.root, 'slot'));
    symlinkSync(candidatePath(), candidatePath());
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false });
  });

  it('an executable FIFO (never opened, so nothing blocks)', async () => {
    mkdirSync(join(scratch.root, 'slot'));
    expect(spawnSync('mkfifo', ['-m', '755', candidatePath()]).status).toBe(0);
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: false, withinMs: 1000 });
  });
});

describe('E57 `version` that hangs, forks or misbehaves', () => {
  it('sleeps forever: E_CANDIDATE_INVALID within the version timeout, and the process tree is gone', async () => {
    writeCandidate(
      script(`sleep 1000 &
echo $! > '${join(witness.root, 'child')}'
echo $$ > '${join(witness.root, 'pid')}'
exec sleep 1000`),
    );
    await refusedCandidate('E_CANDIDATE_INVALID', { check: { versionTimeoutMs: 500 }, withinMs: 1500, ran: true });
    const pid = readPid('pid');
    const child = readPid('child');
    expect(
      await eventually(() => !alive(pid) && !alive(child), 1000),
      `${describeProcess(pid)} / ${describeProcess(child)}`,
    ).toBe(true);
  });

  it('forks a daemon that holds stdout open, prints a version and exits 0: returns promptly, daemon killed', async () => {
    writeCandidate(
      script(`sleep 1000 &
echo $! > '${join(witness.root, 'daemon')}'
echo 'aks-flex-node version v1.2.3'
exit 0`),
    );
    await acceptedCandidate('1.2.3', { check: { versionTimeoutMs: 10_000 }, withinMs: 1500 });
    const daemon = readPid('daemon');
    expect(await eventually(() => !alive(daemon), 1000), describeProcess(daemon)).toBe(true);
  });

  it('forks a daemon that holds stdout open and exits 3 → E_CANDIDATE_INVALID promptly', async () => {
    writeCandidate(
      script(`sleep 1000 &
echo $! > '${join(witness.root, 'daemon')}'
exit 3`),
    );
    await refusedCandidate('E_CANDIDATE_INVALID', { check: { versionTimeoutMs: 10_000 }, withinMs: 1500, ran: true });
    const daemon = readPid('daemon');
    expect(await eventually(() => !alive(daemon), 1000), describeProcess(daemon)).toBe(true);
  });

  it('a daemon that leaves the process group with setsid does not stall the check, and does not survive it', async () => {
    writeCandidate(
      script(`setsid sh -c 'echo $$ > "${join(witness.root, 'daemon')}"; exec sleep 1000' &
sleep 0.2
echo 'v1.2.3'
exit 0`),
    );
    await acceptedCandidate('1.2.3', { check: { versionTimeoutMs: 10_000 }, withinMs: 2000 });
    const daemon = readPid('daemon');
    const gone = await eventually(() => !alive(daemon), 1000);
    if (!gone) process.kill(daemon, 'SIGKILL'); // never leave it behind, whatever the verdict
    expect(gone, 'the escaped daemon was still running after the check').toBe(true);
  });

  it('exits non-zero with the canary on stdout and stderr → E_CANDIDATE_INVALID, nothing of it in the message', async () => {
    writeCandidate(script('echo 1.2.3\nexit 1'));
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: true });
  });

  it('kills itself with SIGKILL → E_CANDIDATE_INVALID', async () => {
    writeCandidate(script('echo 1.2.3\nkill -KILL $$'));
    await refusedCandidate('E_CANDIDATE_INVALID', { ran: true });
  });

  it('floods 8 MiB of output and exits 1 → E_CANDIDATE_INVALID, bounded', async () => {
    writeCandidate(script('head -c 8388608 /dev/zero | tr "\\0" "x"\nexit 1'));
    await refusedCandidate('E_CANDIDATE_INVALID', { check: { versionTimeoutMs: 5000 }, ran: true });
  });

  it('prints its version only after 8 KiB of noise → E_CANDIDATE_VERSION (output is bounded)', async () => {
    writeCandidate(script('head -c 8192 /dev/zero | tr "\\0" "x"\necho\necho 1.2.3\nexit 0'));
    await refusedCandidate('E_CANDIDATE_VERSION', { ran: true });
  });
});

describe('E the printed version → E_CANDIDATE_VERSION when it cannot be parsed', () => {
  it.each([
    ['"latest"', 'echo "aks-flex-node version latest"'],
    ['two components', 'echo "version 1.2"'],
    ['four components', 'echo "version 1.2.3.4"'],
    ['a leading zero', 'echo "version 01.2.3"'],
    ['nothing at all', 'exec >/dev/null; true'],
    ['a 100-character pre-release', `echo "version 1.2.3-${'a'.repeat(100)}"`],
    ['a number too large', 'echo "version 1.2.99999999999"'],
  ])('%s', async (_name, body) => {
    writeCandidate(script(`${body}\nexit 0`));
    await refusedCandidate('E_CANDIDATE_VERSION', { ran: true });
  });
});

describe('E version policy: mismatch, downgrade, quarantine', () => {
  it.each([
    ['1.2.3', '1.2.4'],
    ['1.2.3', '1.2.3-rc.1'],
    ['1.2.3-rc.1', '1.2.3'],
    ['2.0.0', '1.2.3'],
  ])('prints %s when %s was requested → E_VERSION_MISMATCH', async (printed, requested) => {
    writeCandidate(script(`echo "aks-flex-node version v${printed}"`));
    await refusedCandidate('E_VERSION_MISMATCH', { check: { requestedVersion: v(requested) }, ran: true });
  });

  it('control: build metadata is ignored when matching the requested version', async () => {
    writeCandidate(script('echo "version 1.2.3+build.7"'));
    await acceptedCandidate('1.2.3+build.7', { check: { requestedVersion: v('1.2.3+other') } });
  });

  it.each([
    ['1.2.3', '1.3.0'],
    ['1.3.0-rc.1', '1.3.0'],
    ['0.9.9', '1.0.0'],
  ])('prints %s below the current %s → E_DOWNGRADE_REFUSED', async (printed, current) => {
    writeCandidate(script(`echo "version ${printed}"`));
    await refusedCandidate('E_DOWNGRADE_REFUSED', { check: { currentVersion: v(current) }, ran: true });
  });

  it('control: the same downgrade is accepted with allowDowngrade', async () => {
    writeCandidate(script('echo "version 1.2.3"'));
    await acceptedCandidate('1.2.3', { check: { currentVersion: v('1.3.0'), allowDowngrade: true } });
  });

  it('control: a version equal to the current one is not a downgrade', async () => {
    writeCandidate(script('echo "version 1.3.0"'));
    await acceptedCandidate('1.3.0', { check: { currentVersion: v('1.3.0') } });
  });

  it('a quarantined digest → E_QUARANTINED, and the candidate never runs', async () => {
    const path = writeCandidate(script('echo 1.2.3'));
    const digest = sha256FromHex(createHash('sha256').update(readFileSync(path)).digest('hex'));
    const runner = new CountingRunner();
    await refusedCandidate('E_QUARANTINED', {
      check: { state: withQuarantined(emptyUpgradeState(), digest) },
      runner,
      ran: false,
    });
    expect(runner.calls).toEqual([]);
  });

  it('control: the quarantined digest is accepted with force', async () => {
    const path = writeCandidate(script('echo 1.2.3'));
    const digest = sha256FromHex(createHash('sha256').update(readFileSync(path)).digest('hex'));
    const checked = await acceptedCandidate('1.2.3', {
      check: { state: withQuarantined(emptyUpgradeState(), digest), force: true },
    });
    expect(checked.digest).toBe(digest);
  });
});

describe('E ETXTBSY is retried until the one deadline', () => {
  const good: RunOutcome = { kind: 'exited', exitCode: 0, stdout: 'aks-flex-node version v1.2.3\n', stderr: '' };
  const busy: RunOutcome = { kind: 'spawn-failed', code: 'ETXTBSY' };

  it('ETXTBSY twice, then a good run: accepted after three attempts', async () => {
    writeExecutable(candidatePath(), script('echo 1.2.3'));
    const runner = new ScriptedRunner([busy, busy, good]);
    const clock = new TinyClock();
    await acceptedCandidate('1.2.3', { runner, clock });
    expect(runner.calls).toHaveLength(3);
    expect(clock.sleeps).toHaveLength(2);
    // Each attempt gets only what is left of the one deadline.
    const timeouts = runner.calls.map((c) => c.timeoutMs);
    expect(timeouts[0]).toBe(500);
    expect(timeouts[2]).toBeLessThan(500);
  });

  it('ETXTBSY forever → E_CANDIDATE_INVALID once the version timeout is used up', async () => {
    writeExecutable(candidatePath(), script('echo 1.2.3'));
    const runner = new ScriptedRunner([busy]);
    const clock = new TinyClock();
    await refusedCandidate('E_CANDIDATE_INVALID', { runner, clock, check: { versionTimeoutMs: 500 } });
    expect(runner.calls.length).toBeGreaterThan(1);
    expect(runner.calls.length).toBeLessThanOrEqual(6);
  });

  it('another spawn failure (EACCES) is not retried → E_CANDIDATE_INVALID', async () => {
    writeExecutable(candidatePath(), script('echo 1.2.3'));
    const runner = new ScriptedRunner([{ kind: 'spawn-failed', code: 'EACCES' }, good]);
    await refusedCandidate('E_CANDIDATE_INVALID', { runner, clock: new TinyClock() });
    expect(runner.calls).toHaveLength(1);
  });

  it('the version command is run as `<candidate> version`, with bounded output', async () => {
    writeExecutable(candidatePath(), script('echo 1.2.3'));
    const runner = new ScriptedRunner([good]);
    await acceptedCandidate('1.2.3', { runner, clock: new TinyClock() });
    expect(runner.calls[0]).toMatchObject({ command: candidatePath(), args: ['version'] });
    expect(runner.calls[0]?.outputMaxBytes).toBeLessThanOrEqual(64 * 1024);
  });
});
