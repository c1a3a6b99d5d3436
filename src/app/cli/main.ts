import { realpathSync } from 'node:fs';
import { hostArchitecture } from '../../adapters/node/host-architecture.js';
import type { LogLevel } from '../../adapters/logging/pino-logger.js';
import type { Logger } from '../../ports/logger.js';
import type { HostIdentity } from '../host-identity.js';
import type { CliContext, GlobalOptions } from './cli-context.js';
import { createCli, runCli } from './create-cli.js';

/** The production entry point: real streams, the real host, logs as JSON on stderr. */
export async function main(argv: readonly string[]): Promise<number> {
  // A reader that went away (`agent-upgrade status | head`) is not an error worth a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  const context: CliContext = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    colorDepth: 1,
    // The use cases and their modules load only when a command needs them, so `version` and
    // `--help` start in about the time of Node itself (SPEC §10).
    async openUpgrader(options: GlobalOptions) {
      const [{ loadConfig }, { createUpgrader }, { NodeFileSystem }] = await Promise.all([
        import('../config/load-config.js'),
        import('../upgrader.js'),
        import('../../adapters/node/node-file-system.js'),
      ]);
      const fs = new NodeFileSystem();
      const config = await loadConfig(fs, { path: options.configPath, root: options.root });
      if (!config.ok) return config;
      return createUpgrader({ config: config.value, identity: identity(options.configPath ?? null), logger: await logger(options.logLevel), overrides: { fileSystem: fs } });
    },
    host: async (logLevel: string) => ({ identity: identity(null), logger: await logger(logLevel) }),
    interrupts,
  };
  return runCli(createCli(), argv, context);
}

const INTERRUPT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * While listening, a signal aborts instead of killing: the command finishes what must be
 * finished (a rollback) and exits with the code that says so. Further signals are absorbed
 * until then; the work they wait for is bounded (I10).
 */
function interrupts(): { readonly signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  for (const name of INTERRUPT_SIGNALS) process.on(name, onSignal);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const name of INTERRUPT_SIGNALS) process.off(name, onSignal);
    },
  };
}

function identity(configPath: string | null): HostIdentity {
  return {
    euid: process.geteuid?.() ?? 0,
    arch: hostArchitecture(),
    pid: process.pid,
    command: process.argv.slice(1, 3).join(' '),
    invocation: { executable: ownExecutable(), configPath },
  };
}

async function logger(level: string): Promise<Logger> {
  const [{ pino }, { createPinoLogger }] = await Promise.all([import('pino'), import('../../adapters/logging/pino-logger.js')]);
  return createPinoLogger(level as LogLevel, pino.destination({ dest: 2, sync: true }));
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
