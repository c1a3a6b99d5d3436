import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'test-agent.c');
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

export type TestAgentBehaviour = 'healthy' | 'crash-on-start' | { readonly crashAfterSeconds: number };

export interface TestAgentBuild {
  readonly version: string;
  readonly behaviour?: TestAgentBehaviour;
  /** Whether `<agent> recover` runs this repo's upgrader (a self-hosted agent that embeds it). */
  readonly embedsUpgrader?: boolean;
}

/**
 * Compiles the test agent with gcc into `directory` and returns its path. Different builds
 * differ in bytes (the version is compiled in), so each has its own digest.
 */
export function buildTestAgent(directory: string, build: TestAgentBuild): string {
  const behaviour = build.behaviour ?? 'healthy';
  const crashAfterSeconds =
    behaviour === 'healthy' ? null : behaviour === 'crash-on-start' ? 0 : behaviour.crashAfterSeconds;
  const name = `agent-${build.version}-${crashAfterSeconds ?? 'ok'}${build.embedsUpgrader === true ? '-embed' : ''}`;
  const output = join(directory, name);
  if (existsSync(output)) return output;
  mkdirSync(directory, { recursive: true });
  const defines = [`-DAGENT_VERSION="${build.version}"`];
  if (crashAfterSeconds !== null) defines.push(`-DCRASH_AFTER_SECONDS=${crashAfterSeconds}`);
  if (build.embedsUpgrader === true)
    defines.push(`-DUPGRADER_NODE="${process.execPath}"`, `-DUPGRADER_SCRIPT="${join(REPO, 'bin/agent-upgrade')}"`);
  execFileSync('gcc', ['-O1', '-Wall', '-Werror', ...defines, '-o', output, SOURCE], {
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 60_000,
  });
  return output;
}

/**
 * The file that makes `version` of the agent answer its health endpoint 503 while it exists (the
 * agent serves HTTP on the unix socket given as `--health-socket PATH`).
 */
export function healthFailFile(socketPath: string, version: string): string {
  return `${socketPath}.fail-${version}`;
}

/**
 * A copy of a built agent whose compiled-in version string is replaced by another of the same
 * length (e.g. 2.1.100 → 2.1.137): many distinct, real binaries without a compiler run each.
 */
export function withVersion(built: Uint8Array, from: string, to: string): Uint8Array {
  if (from.length !== to.length) throw new Error('versions must have the same length');
  const bytes = Buffer.from(built);
  const at = bytes.indexOf(Buffer.from(`${from}\0`, 'latin1'));
  if (at < 0 || bytes.indexOf(Buffer.from(`${from}\0`, 'latin1'), at + 1) >= 0)
    throw new Error(`the version ${from} is not compiled in exactly once`);
  bytes.write(to, at, 'latin1');
  return bytes;
}
