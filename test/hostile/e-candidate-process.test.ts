import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunOutcome } from '../../src/ports/common/process-runner.js';
import { writeExecutable } from '../support/real-tree.js';
import {
  acceptedCandidate,
  alive,
  candidatePath,
  describeProcess,
  readPid,
  refusedCandidate,
  ScriptedRunner,
  script,
  TinyClock,
  useCandidateScratch,
  witnessRoot,
  writeCandidate,
} from './e-candidate-scratch.js';
import { eventually } from './harness.js';

/**
 * Category E: candidate verification, with real processes in a scratch directory (the checks and
 * what they assert: e-candidate-scratch.ts).
 * Here: the `version` run hangs, forks or misbehaves, or its spawn fails.
 */

useCandidateScratch();

describe('E57 `version` that hangs, forks or misbehaves', () => {
  it('sleeps forever: E_CANDIDATE_INVALID within the version timeout, and the process tree is gone', async () => {
    writeCandidate(
      script(`sleep 1000 &
echo $! > '${join(witnessRoot(), 'child')}'
echo $$ > '${join(witnessRoot(), 'pid')}'
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
echo $! > '${join(witnessRoot(), 'daemon')}'
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
echo $! > '${join(witnessRoot(), 'daemon')}'
exit 3`),
    );
    await refusedCandidate('E_CANDIDATE_INVALID', { check: { versionTimeoutMs: 10_000 }, withinMs: 1500, ran: true });
    const daemon = readPid('daemon');
    expect(await eventually(() => !alive(daemon), 1000), describeProcess(daemon)).toBe(true);
  });

  it('a daemon that leaves the process group with setsid does not stall the check, and does not survive it', async () => {
    writeCandidate(
      script(`setsid sh -c 'echo $$ > "${join(witnessRoot(), 'daemon')}"; exec sleep 1000' &
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
