import { spawn } from 'node:child_process';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../ports/process-runner.js';

/** After the program exits, how long its inherited pipes may stay open before the group dies. */
const PIPE_GRACE_MS = 200;

/**
 * Runs a program in its own process group, without a shell. On timeout, abort or exit the
 * whole group is killed, so a candidate that forks a daemon or holds its output pipes open
 * cannot outlive or stall the check. Captured output is cut at `outputMaxBytes` per stream.
 */
export class NodeProcessRunner implements ProcessRunner {
  run(request: RunRequest): Promise<RunOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const stdout = new BoundedText(request.outputMaxBytes);
      const stderr = new BoundedText(request.outputMaxBytes);
      const child = spawn(request.command, [...request.args], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: request.env === undefined ? process.env : { ...request.env },
      });
      const killGroup = (): void => {
        if (child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // The group is already gone.
        }
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
