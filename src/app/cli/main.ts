import { realpathSync } from 'node:fs';
import { hostArchitecture } from '../../adapters/node/host-architecture.js';
import { pino } from 'pino';
import { NodeFileSystem } from '../../adapters/node/node-file-system.js';
import { createPinoLogger, type LogLevel } from '../../adapters/logging/pino-logger.js';
import { loadConfig } from '../config/load-config.js';
import type { Logger } from '../../ports/logger.js';
import type { HostIdentity } from '../host-identity.js';
import { createUpgrader } from '../upgrader.js';
import type { CliContext, GlobalOptions } from './cli-context.js';
import { createCli, runCli } from './create-cli.js';

/** The production entry point: real streams, the real host, logs as JSON on stderr. */
export async function main(argv: readonly string[]): Promise<number> {
  // A reader that went away (`agent-upgrade status | head`) is not an error worth a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
  const fs = new NodeFileSystem();
  const context: CliContext = {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    colorDepth: 1,
    async openUpgrader(options: GlobalOptions) {
      const config = await loadConfig(fs, { path: options.configPath, root: options.root });
      if (!config.ok) return config;
      return createUpgrader({ config: config.value, identity: identity(options.configPath ?? null), logger: logger(options.logLevel), overrides: { fileSystem: fs } });
    },
    host: (logLevel: string) => ({ identity: identity(null), logger: logger(logLevel) }),
  };
  return runCli(createCli(), argv, context);
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

function logger(level: string): Logger {
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
