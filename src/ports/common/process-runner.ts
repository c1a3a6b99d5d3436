/**
 * Runs a program without a shell. Used for `<candidate> version`, systemctl and systemd-run.
 * Arguments never carry secrets (docs/protocol.md#i8): callers pass redacted values only.
 */
export interface RunRequest {
  readonly command: string;
  readonly args: readonly string[];
  /** The whole process tree is killed when this elapses. */
  readonly timeoutMs: number;
  /** Captured stdout and stderr are each cut at this many bytes. */
  readonly outputMaxBytes: number;
  readonly env?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export type RunOutcome =
  | { readonly kind: 'exited'; readonly exitCode: number; readonly stdout: string; readonly stderr: string }
  | { readonly kind: 'signalled'; readonly signal: string; readonly stdout: string; readonly stderr: string }
  | { readonly kind: 'timed-out' }
  | { readonly kind: 'spawn-failed'; readonly code: string };

export interface ProcessRunner {
  /** Never throws for the program's own failures; they are outcomes. */
  run(request: RunRequest): Promise<RunOutcome>;
}
