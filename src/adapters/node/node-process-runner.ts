import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../ports/process-runner.js';

/** After the program exits, how long its inherited pipes may stay open before the group dies. */
const PIPE_GRACE_MS = 200;

/** Marks every process a run starts, so descendants that left the process group are found. */
const RUN_TAG_VARIABLE = 'AGENT_UPGRADE_RUN_ID';

/**
 * Runs a program in its own process group, without a shell. On timeout, abort or exit the
 * whole tree is killed — the process group, and every process that still carries this run's
 * tag in its environment (a daemon that called setsid, even after a double fork) — so a
 * candidate cannot outlive or stall the check. Captured output is cut at `outputMaxBytes` per
 * stream. (A descendant that also clears its environment escapes; only a cgroup, as a systemd
 * scope gives, contains that.)
 */
export class NodeProcessRunner implements ProcessRunner {
  run(request: RunRequest): Promise<RunOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const stdout = new BoundedText(request.outputMaxBytes);
      const stderr = new BoundedText(request.outputMaxBytes);
      const tag = randomBytes(12).toString('hex');
      const child = spawn(request.command, [...request.args], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...(request.env ?? process.env), [RUN_TAG_VARIABLE]: tag },
      });
      const killGroup = (): void => {
        if (child.pid !== undefined) signal(-child.pid);
        for (const pid of taggedProcesses(tag)) signal(pid);
      };
      const finish = (outcome: RunOutcome): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.signal?.removeEventListener('abort', onAbort);
        killGroup();
        resolve(outcome);
      };
      const timer = setTimeout(() => finish({ kind: 'timed-out' }), request.timeoutMs);
      const onAbort = (): void => finish({ kind: 'timed-out' });
      request.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
      child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
      child.once('error', (error: NodeJS.ErrnoException) => finish({ kind: 'spawn-failed', code: error.code ?? 'UNKNOWN' }));
      child.once('exit', (code, signal) => {
        const outcome = (): RunOutcome =>
          signal !== null
            ? { kind: 'signalled', signal, stdout: stdout.text(), stderr: stderr.text() }
            : { kind: 'exited', exitCode: code ?? 0, stdout: stdout.text(), stderr: stderr.text() };
        // Wait briefly for the pipes to drain; a grandchild holding them open is killed with the group.
        const grace = setTimeout(() => finish(outcome()), PIPE_GRACE_MS);
        child.once('close', () => {
          clearTimeout(grace);
          finish(outcome());
        });
      });
    });
  }
}

class BoundedText {
  private readonly chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly maxBytes: number) {}

  add(chunk: Buffer): void {
    const room = this.maxBytes - this.size;
    if (room <= 0) return;
    const kept = chunk.subarray(0, room);
    this.chunks.push(kept);
    this.size += kept.length;
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function signal(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** Processes whose environment carries the run's tag (readable to root, and to their owner). */
function taggedProcesses(tag: string): number[] {
  const marker = `${RUN_TAG_VARIABLE}=${tag}\0`;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) found.push(Number(entry));
    } catch {
      // Exited meanwhile, or not ours to read.
    }
  }
  return found;
}
