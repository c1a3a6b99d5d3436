import { hostArchitecture } from '../../src/adapters/node/host/host-architecture.js';
import { PassThrough } from 'node:stream';
import { loadConfig } from '../../src/app/node/config/load-config.js';
import type { ProgramContext } from '../../src/app/main/program-context.js';
import { openRollouts } from '../../src/app/fleet/composition/open-rollouts.js';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import type { Clock } from '../../src/ports/common/clock.js';
import { RolloutControl } from '../../src/app/fleet/rollout/rollout-control.js';
import type { RolloutStore } from '../../src/ports/fleet/rollout-store.js';
import { createCli, runCli } from '../../src/app/main/create-cli.js';
import type { PortOverrides } from '../../src/app/node/composition/port-overrides.js';
import { createUpgrader } from '../../src/app/node/composition/create-upgrader.js';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import type { Logger } from '../../src/ports/common/logger.js';
import { RecordingLogger } from './recording-logger.js';

export interface CliRun {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the real Cli over in-memory streams, building use cases the way main.ts does. */
export async function runCliInMemory(
  argv: readonly string[],
  options: {
    euid?: number;
    overrides?: PortOverrides;
    logger?: Logger;
    tty?: boolean;
    /** The AgentRollouts of `rollout …`; default: the cluster its options name. */
    rolloutStore?: RolloutStore;
    /** The clock of `rollout …` over `rolloutStore` (default: a memory clock at its fixed epoch). */
    clock?: Clock;
    /** Stdout is a terminal this many columns wide. */
    stdoutColumns?: number;
  } = {},
): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (chunk: Buffer) => out.push(chunk));
  stderr.on('data', (chunk: Buffer) => err.push(chunk));
  // A terminal, as far as the command can tell: it only looks at isTTY.
  if (options.tty === true) Object.assign(stderr, { isTTY: true });
  if (options.stdoutColumns !== undefined) Object.assign(stdout, { isTTY: true, columns: options.stdoutColumns });
  const fs = options.overrides?.fileSystem ?? new NodeFileSystem();
  const { rolloutStore } = options;
  const context: ProgramContext = {
    stdin: new PassThrough(),
    stdout,
    stderr,
    env: {},
    colorDepth: 1,
    async openUpgrader(globals) {
      const config = await loadConfig(fs, { path: globals.configPath, root: globals.root });
      if (!config.ok) return config;
      return createUpgrader({
        config: config.value,
        identity: { euid: options.euid ?? 0, arch: hostArchitecture(), pid: 4242, command: 'agent-upgrade' },
        logger: options.logger ?? new RecordingLogger(),
        overrides: { fileSystem: fs, ...options.overrides },
      });
    },
    logger: async () => options.logger ?? new RecordingLogger(),
    openRollouts: async (cluster) =>
      rolloutStore === undefined
        ? openRollouts(cluster)
        : new RolloutControl({ openStore: async () => rolloutStore, clock: options.clock ?? new MemoryClock() }),
    host: async () => ({
      identity: { euid: options.euid ?? 0, arch: hostArchitecture(), pid: 4242, command: 'agent-upgrade' },
      logger: new RecordingLogger(),
    }),
  };
  const exitCode = await runCli(createCli(), argv, context);
  return { exitCode, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}
