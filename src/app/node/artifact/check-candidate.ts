import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';
import {
  checkCandidateVersion,
  checkNotQuarantined,
  VERSION_OUTPUT_MAX_BYTES,
  VERSION_TIMEOUT_MS,
  versionFromOutput,
} from '../../../domain/node/activation/candidate-policy.js';
import type { Sha256 } from '../../../domain/common/digest.js';
import {
  checkExecutableFormat,
  ELF_PROBE_BYTES,
  identifyExecutable,
  programHeadersBeyond,
} from '../../../domain/node/artifact/elf.js';
import { failure } from '../../../domain/common/failure.js';
import type { UpgradeState } from '../../../domain/node/record/upgrade-state.js';
import type { Version } from '../../../domain/common/version.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { ProcessRunner, RunOutcome } from '../../../ports/common/process-runner.js';
import { raise, unwrap } from '../../common/failure-signal.js';

/** Pause between attempts when the kernel still sees the file open for writing. */
const TEXT_BUSY_RETRY_MS = 100;

export interface CandidateCheck {
  readonly path: string;
  readonly arch: HostArchitecture;
  readonly allowScripts: boolean;
  readonly maxBinaryBytes: number;
  readonly requestedVersion: Version | null;
  /** The publisher's signed version of this release (signed releases); the candidate must print it. */
  readonly signedVersion?: Version | null;
  readonly currentVersion: Version | null;
  readonly allowDowngrade: boolean;
  readonly requestedBy: 'command' | 'operation';
  readonly state: UpgradeState;
  readonly force: boolean;
  /** Defaults to 30 s; tests shorten it. */
  readonly versionTimeoutMs?: number;
}

export interface CheckedCandidate {
  readonly digest: Sha256;
  readonly bytes: number;
  readonly version: Version;
}

export interface CandidateCheckDependencies {
  readonly fs: FileSystem;
  readonly runner: ProcessRunner;
  readonly clock: Clock;
}

/**
 * The checks a candidate passes before activation
 * (docs/operations.md#direct-upgrades-activate-and-install), cheapest and safest first: a regular
 * executable, not quarantined, built for this machine — all before it is run — then `<candidate>
 * version` within 30 s, whose output is parsed for the version and otherwise dropped, so nothing
 * the candidate prints can reach logs or status.
 */
export async function checkCandidate(
  deps: CandidateCheckDependencies,
  check: CandidateCheck,
): Promise<CheckedCandidate> {
  const resolved = await deps.fs.resolve(check.path);
  if (resolved.kind !== 'resolved' || resolved.stat.kind !== 'file' || (resolved.stat.mode & 0o111) === 0) {
    raise(failure('E_CANDIDATE_INVALID', `the candidate ${check.path} is not a regular executable file`));
  }
  const digest = await deps.fs.hashFile(check.path, check.maxBinaryBytes);
  unwrap(checkNotQuarantined(check.state, digest.sha256, check.force));
  const head = (await deps.fs.readRange(check.path, 0, ELF_PROBE_BYTES)) ?? new Uint8Array();
  const table = programHeadersBeyond(head);
  const programHeaders =
    table === null ? undefined : ((await deps.fs.readRange(check.path, table.offset, table.bytes)) ?? undefined);
  unwrap(checkExecutableFormat(identifyExecutable(head, digest.bytes, programHeaders), check.arch, check.allowScripts));
  const timeoutMs = check.versionTimeoutMs ?? VERSION_TIMEOUT_MS;
  const outcome = await runVersion(deps, check.path, timeoutMs);
  if (outcome.kind !== 'exited' || outcome.exitCode !== 0)
    raise(failure('E_CANDIDATE_INVALID', `the candidate's version command ${describe(outcome, timeoutMs)}`));
  const printed = unwrap(versionFromOutput(outcome.stdout));
  const version = unwrap(
    checkCandidateVersion({
      printed,
      requested: check.requestedVersion,
      signed: check.signedVersion ?? null,
      current: check.currentVersion,
      allowDowngrade: check.allowDowngrade,
      requestedBy: check.requestedBy,
    }),
  );
  return { digest: digest.sha256, bytes: digest.bytes, version };
}

/**
 * The version a binary reports, or null when it does not say (fails, times out, prints none):
 * how the running binary's version is learnt when the state file does not know it.
 */
export async function probeVersion(
  deps: CandidateCheckDependencies,
  path: string,
  timeoutMs: number = VERSION_TIMEOUT_MS,
): Promise<Version | null> {
  const outcome = await runVersion(deps, path, timeoutMs);
  if (outcome.kind !== 'exited' || outcome.exitCode !== 0) return null;
  const printed = versionFromOutput(outcome.stdout);
  return printed.ok ? printed.value : null;
}

/** Runs `<candidate> version`, retrying ETXTBSY until the one overall deadline. */
async function runVersion(deps: CandidateCheckDependencies, path: string, timeoutMs: number): Promise<RunOutcome> {
  const deadlineMs = deps.clock.monotonicMs() + timeoutMs;
  for (;;) {
    const remainingMs = deadlineMs - deps.clock.monotonicMs();
    if (remainingMs <= 0) return { kind: 'timed-out' };
    const outcome = await deps.runner.run({
      command: path,
      args: ['version'],
      timeoutMs: remainingMs,
      outputMaxBytes: VERSION_OUTPUT_MAX_BYTES,
    });
    if (outcome.kind !== 'spawn-failed' || outcome.code !== 'ETXTBSY') return outcome;
    await deps.clock.sleep(TEXT_BUSY_RETRY_MS);
  }
}

function describe(outcome: RunOutcome, timeoutMs: number): string {
  switch (outcome.kind) {
    case 'exited':
      return `exited with status ${outcome.exitCode}`;
    case 'signalled':
      return `was killed by ${outcome.signal}`;
    case 'timed-out':
      return `did not finish within ${timeoutMs} ms`;
    case 'spawn-failed':
      return `could not be started (${outcome.code})`;
  }
}
