import { realpathSync } from 'node:fs';
import { hostArchitecture } from '../../adapters/node/host/host-architecture.js';
import type { Logger } from '../../ports/common/logger.js';
import type { HostIdentity } from '../node/host-identity.js';
import type { GlobalOptions } from '../node/cli/node-cli-context.js';
import { createCliLogger } from '../common/cli/cli-logger.js';
import { createCli, runCli } from './create-cli.js';
import { InterruptReason, type InterruptCause } from '../common/cli/interrupt-exit.js';
import type { ProgramContext } from './program-context.js';

/** The production entry point: real streams, the real host, logs on stderr (JSON, or lines on a terminal). */
export async function main(argv: readonly string[]): Promise<number> {
  // A reader that went away (`agent-upgrade status | head`) is not an error worth a stack trace.
  // A command still at work (the demo prints as it goes) is interrupted instead, so it cleans up.
  // Once interrupted, it alone decides the exit code: a later EPIPE (its final output) is moot.
  let readerGone = false;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    if (readerGone) return;
    readerGone = true;
    if (activeInterrupts.size === 0) process.exit(process.exitCode ?? 0);
    for (const interrupt of activeInterrupts) interrupt('SIGPIPE');
  });
  const context: ProgramContext = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    colorDepth: 1,
    // The use cases and their modules load only when a command needs them, so `version` and
    // `--help` start in about the time of Node itself (docs/benchmarks.md#start-up).
    async openUpgrader(options: GlobalOptions) {
      const [{ loadConfig }, { createUpgrader }, { NodeFileSystem }] = await Promise.all([
        import('../node/config/load-config.js'),
        import('../node/composition/create-upgrader.js'),
        import('../../adapters/node/host/node-file-system.js'),
      ]);
      const fs = new NodeFileSystem();
      const config = await loadConfig(fs, { path: options.configPath, root: options.root });
      if (!config.ok) return config;
      return createUpgrader({
        config: config.value,
        identity: identity(options.commandPath, options.configPath ?? null),
        logger: await logger(options.logLevel),
        overrides: { fileSystem: fs },
      });
    },
    host: async (logLevel: string, commandPath: readonly string[]) => ({
      identity: identity(commandPath, null),
      logger: await logger(logLevel),
    }),
    logger,
    async openRollouts(cluster) {
      const { openRollouts } = await import('../fleet/composition/open-rollouts.js');
      return openRollouts(cluster);
    },
    interrupts,
  };
  return runCli(createCli(), argv, context);
}

const INTERRUPT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const activeInterrupts = new Set<(cause: InterruptCause) => void>();

/**
 * While listening, a signal aborts instead of killing: the command finishes what must be
 * finished (a rollback, removing a temp file or a sandbox) and exits with the code that says
 * so. Further signals are absorbed until then; the work they wait for is bounded (I10). The
 * abort reason names the signal (InterruptReason).
 */
function interrupts(): { readonly signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const interrupt = (cause: InterruptCause): void => {
    if (!controller.signal.aborted) controller.abort(new InterruptReason(cause));
  };
  const listeners = INTERRUPT_SIGNALS.map((name) => [name, () => interrupt(name)] as const);
  for (const [name, listener] of listeners) process.on(name, listener);
  activeInterrupts.add(interrupt);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const [name, listener] of listeners) process.off(name, listener);
      activeInterrupts.delete(interrupt);
    },
  };
}

function identity(commandPath: readonly string[], configPath: string | null): HostIdentity {
  return {
    euid: process.geteuid?.() ?? 0,
    arch: hostArchitecture(),
    pid: process.pid,
    command: ['agent-upgrade', ...commandPath].join(' '),
    invocation: { executable: ownExecutable(), configPath },
  };
}

function logger(level: string): Promise<Logger> {
  return createCliLogger(level, process.stderr);
}

/** The file that runs this CLI again: the script node was given (bin/agent-upgrade), resolved. */
function ownExecutable(): string {
  const script = process.argv[1];
  if (script === undefined) return process.execPath;
  try {
    return realpathSync(script);
  } catch {
    return script;
  }
}
