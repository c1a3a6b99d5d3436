import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../../ports/common/process-runner.js';
import { DescendantTracker, procPids } from './proc-tree.js';
import { RunCgroup } from './run-cgroup.js';

/** After the program exits, how long its inherited pipes may stay open before the tree dies. */
const PIPE_GRACE_MS = 200;
/** How long a killed tree may take to be gone before the run returns anyway. */
const TREE_STOP_MS = 2000;
/** How often /proc is read for new descendants when no cgroup holds them. */
const PROC_SCAN_INTERVAL_MS = 50;

/** Marks every process a run starts, so descendants that left the process group are found. */
const RUN_TAG_VARIABLE = 'AGENT_UPGRADE_RUN_ID';

export interface NodeProcessRunnerOptions {
  /**
   * `auto` (the default) contains each run in a cgroup v2 group of its own when one can be made
   * and falls back to tracking /proc; `process-tree` always tracks /proc (tests of the fallback).
   */
  readonly containment?: 'auto' | 'process-tree';
}

type Child = ChildProcessByStdio<null, Readable, Readable>;

/**
 * Runs a program in its own session and process group, without a shell, and returns within
 * `timeoutMs` (plus the time a killed tree takes to go) whatever its descendants do: once the
 * program exited and a short grace passed, or at the deadline, the pipes are destroyed — a
 * daemon still holding them cannot keep this process alive — and the whole tree is killed. The
 * tree is a cgroup v2 group when one can be made (nothing escapes it: not setsid, a double fork
 * or a cleared environment); otherwise the processes found in /proc while it ran, by parent,
 * session, process group and this run's tag in their environment. Captured output is cut at
 * `outputMaxBytes` per stream.
 */
export class NodeProcessRunner implements ProcessRunner {
  constructor(private readonly options: NodeProcessRunnerOptions = {}) {}

  run(request: RunRequest): Promise<RunOutcome> {
    const tag = randomBytes(12).toString('hex');
    const group = this.options.containment === 'process-tree' ? null : RunCgroup.create(tag);
    const start = (): Child =>
      spawn(request.command, [...request.args], {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...(request.env ?? process.env), [RUN_TAG_VARIABLE]: tag },
      });
    let child: Child;
    let contained: RunCgroup | null = null;
    try {
      const inside = group?.spawnInside(start) ?? null;
      contained = inside === null ? null : group;
      child = inside ?? start();
    } catch (error) {
      // Some spawn failures (ETXTBSY among them) are thrown rather than emitted.
      void group?.stop(TREE_STOP_MS);
      return Promise.resolve({ kind: 'spawn-failed', code: (error as NodeJS.ErrnoException).code ?? 'UNKNOWN' });
    }
    // Without a group, the tree is whatever /proc shows of it while it runs.
    const tracker = contained === null && child.pid !== undefined ? new DescendantTracker(child.pid) : null;
    return supervise(child, request, tracker, () => stopTree(child, contained, tracker, tag));
  }
}

/** Collects output and settles once: exit (+ grace), deadline, abort or spawn error. */
function supervise(
  child: Child,
  request: RunRequest,
  tracker: DescendantTracker | null,
  stop: () => Promise<void>,
): Promise<RunOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const stdout = new BoundedText(request.outputMaxBytes);
    const stderr = new BoundedText(request.outputMaxBytes);
    let grace: NodeJS.Timeout | undefined;
    const finish = (outcome: RunOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(grace);
      clearInterval(scanning);
      request.signal?.removeEventListener('abort', onAbort);
      // Whoever still holds the write ends, this process stops waiting for them.
      child.stdout.destroy();
      child.stderr.destroy();
      void stop().then(() => resolve(outcome));
    };
    const deadline = setTimeout(() => finish({ kind: 'timed-out' }), request.timeoutMs);
    const scanning = tracker === null ? undefined : setInterval(() => tracker.scan(), PROC_SCAN_INTERVAL_MS);
    tracker?.scan();
    const onAbort = (): void => finish({ kind: 'timed-out' });
    request.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.add(chunk));
    child.once('error', (error: NodeJS.ErrnoException) =>
      finish({ kind: 'spawn-failed', code: error.code ?? 'UNKNOWN' }),
    );
    child.once('exit', (code, signal) => {
      const outcome = (): RunOutcome =>
        signal !== null
          ? { kind: 'signalled', signal, stdout: stdout.text(), stderr: stderr.text() }
          : { kind: 'exited', exitCode: code ?? 0, stdout: stdout.text(), stderr: stderr.text() };
      // Wait briefly for the pipes to drain; a descendant holding them open is killed with the tree.
      grace = setTimeout(() => finish(outcome()), PIPE_GRACE_MS);
      child.once('close', () => finish(outcome()));
    });
  });
}

/** Kills the run's whole tree: its cgroup when it has one, else what /proc showed of it. */
async function stopTree(
  child: Child,
  contained: RunCgroup | null,
  tracker: DescendantTracker | null,
  tag: string,
): Promise<void> {
  if (child.pid !== undefined) signal(-child.pid);
  if (contained !== null) return contained.stop(TREE_STOP_MS);
  tracker?.killAll();
  for (const pid of taggedProcesses(tag)) signal(pid);
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
  const found: number[] = [];
  for (const entry of procPids()) {
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) found.push(Number(entry));
    } catch {
      // Exited meanwhile, or not ours to read.
    }
  }
  return found;
}
