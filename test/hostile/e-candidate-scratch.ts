import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { NodeProcessRunner } from '../../src/adapters/common/runtime/node-process-runner.js';
import { SystemClock } from '../../src/adapters/common/runtime/system-clock.js';
import {
  type CandidateCheck,
  checkCandidate,
  type CheckedCandidate,
} from '../../src/app/node/artifact/check-candidate.js';
import { runUseCase } from '../../src/app/common/failure-signal.js';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import type { Result } from '../../src/domain/common/failure.js';
import { emptyUpgradeState } from '../../src/domain/node/record/upgrade-state.js';
import { parseVersion, type Version } from '../../src/domain/common/version.js';
import type { Clock } from '../../src/ports/common/clock.js';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../src/ports/common/process-runner.js';
import { makeScratch, snapshotTree } from '../support/real-tree.js';
import { ARCH, filesContaining, newCanary } from './harness.js';

/**
 * Category E: candidate verification, with real processes in a scratch
 * directory. Each refusal asserts the code, that the scratch tree did not change, and that the
 * canary the candidate prints (built at run time by the shell, so the script text never holds
 * it) appears nowhere: not in the failure message, not in any file.
 * What the category's files share: the scratch and witness directories of the running test
 * (fresh for each test of a file that calls `useCandidateScratch`), the candidate builders, the
 * runners and the clock, and the two checks.
 */

let scratch: { root: string; cleanup(): void };
let witness: { root: string; cleanup(): void };
let canary: string;

/** Gives every test of the calling file a fresh scratch directory, witness directory and canary. */
export function useCandidateScratch(): void {
  beforeEach(() => {
    scratch = makeScratch('agent-upgrade-hostile-e-');
    witness = makeScratch('agent-upgrade-hostile-w-');
    canary = newCanary();
  });
  afterEach(() => {
    scratch.cleanup();
    witness.cleanup();
  });
}

/** The scratch directory the candidate lives in, compared before and after each check. */
export const scratchRoot = (): string => scratch.root;
/** Where a candidate leaves its traces (the pids it writes), outside the compared scratch. */
export const witnessRoot = (): string => witness.root;

export const candidatePath = (): string => join(scratch.root, 'slot', 'candidate');
export const ranMarker = (): string => join(witness.root, 'ran');

/** A `/bin/sh` candidate that records it ran, prints the canary on both streams, then `body`. */
export function script(body: string): string {
  const [head, tail] = [canary.slice(0, 3), canary.slice(3)];
  return `#!/bin/sh
: > '${ranMarker()}'
printf '%s%s\\n' '${head}' '${tail}'
printf '%s%s\\n' '${head}' '${tail}' >&2
${body}
`;
}

export function writeCandidate(content: string | Uint8Array, mode = 0o755): string {
  const path = candidatePath();
  mkdirSync(join(scratch.root, 'slot'), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

/** A 64-byte ELF header: class (1 = 32-bit, 2 = 64-bit), data (1 = LE, 2 = BE), machine. */
export function elfHeader(machine: number, options: { elfClass?: number; data?: number } = {}): Uint8Array {
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

export const v = (text: string): Version => {
  const parsed = parseVersion(text);
  if (!parsed.ok) throw new Error(text);
  return parsed.value;
};

export class CountingRunner implements ProcessRunner {
  readonly calls: RunRequest[] = [];
  constructor(private readonly inner: ProcessRunner = new NodeProcessRunner()) {}
  run(request: RunRequest): Promise<RunOutcome> {
    this.calls.push(request);
    return this.inner.run(request);
  }
}

/** A runner that replays outcomes, repeating the last one. */
export class ScriptedRunner implements ProcessRunner {
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
export class TinyClock implements Clock {
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

export async function refusedCandidate(
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

export async function acceptedCandidate(
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
export async function inWitnessDir<T>(body: () => Promise<T>): Promise<T> {
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
export function alive(pid: number): boolean {
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

export function describeProcess(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return `${pid}: gone`;
  }
}

export function readPid(name: string): number {
  const pid = Number(readFileSync(join(witness.root, name), 'utf8').trim());
  expect(Number.isSafeInteger(pid) && pid > 1).toBe(true);
  return pid;
}
