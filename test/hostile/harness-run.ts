import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { AxiosArtifactSource } from '../../src/adapters/common/http/axios-artifact-source.js';
import type { FetchReport } from '../../src/app/node/artifact/fetch-to-file.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import type { ArtifactSource } from '../../src/ports/common/artifact-source.js';
import { RecordingLogger } from '../support/recording-logger.js';
import { runCliInMemory } from '../support/run-cli.js';
import { sandboxUpgrader } from '../support/sandbox-upgrader.js';

/** How the hostile harness (harness.ts) runs one attempt: through the API or the CLI. */

export type ArtifactConfig = UpgraderConfig['artifact'];

/** Small caps and short timers so every hostile case trips fast; cases override what they test. */
export const FAST_ARTIFACT: ArtifactConfig = {
  ...FLEX_PROFILE.artifact,
  maxArchiveBytes: 1024 * 1024,
  maxBinaryBytes: 256 * 1024,
  timeoutMs: 4000,
  idleTimeoutMs: 1500,
};

export const HEADER_TIMEOUT_MS = 500;

export interface Attempt {
  readonly url: string;
  readonly sha256?: string;
  readonly member?: string;
  /** Default: `<scratch>/out/agent`. May be relative or odd on purpose. */
  readonly output?: string;
  readonly artifact?: Partial<ArtifactConfig>;
  readonly agent?: Partial<UpgraderConfig['agent']>;
  /** Default: an AxiosArtifactSource trusting `caPem` with a 500 ms header timeout. */
  readonly source?: ArtifactSource;
  readonly caPem?: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly headerTimeoutMs?: number;
  /** Extra secrets planted outside the URL's query (userinfo, Location, proxy credentials). */
  readonly secrets?: readonly string[];
  /** `cli` runs the real CLI (`fetch --json`) over in-memory streams; `cli-text` without `--json`. */
  readonly via?: 'api' | 'cli' | 'cli-text';
  /** The whole case must finish within this many ms (bounded waits, early aborts). */
  readonly withinMs?: number;
}

export interface Outcome {
  readonly code: ErrorCode | null;
  readonly message: string;
  readonly elapsedMs: number;
  readonly report: FetchReport | null;
  readonly logs: string;
  readonly cli: { readonly exitCode: number; readonly stdout: string; readonly stderr: string } | null;
}

/** The output file of `attempt` under the scratch `root`. */
export const outputOf = (root: string, attempt: Attempt): string => attempt.output ?? join(root, 'out', 'agent');

const configPathIn = (root: string): string => join(root, 'etc', 'hostile-config.json');

/** What every way of running shares: the source, the logger, the output and the start time. */
interface Run {
  readonly root: string;
  readonly attempt: Attempt;
  readonly source: ArtifactSource;
  readonly logger: RecordingLogger;
  readonly output: string;
  readonly started: number;
}

/** Runs `attempt` in the sandbox at `root` as its `via` says, and reports how it ended. */
export function runAttempt(root: string, attempt: Attempt): Promise<Outcome> {
  const source =
    attempt.source ??
    new AxiosArtifactSource({
      ...(attempt.caPem === undefined ? {} : { caPem: attempt.caPem }),
      headerTimeoutMs: attempt.headerTimeoutMs ?? HEADER_TIMEOUT_MS,
      ...(attempt.env === undefined ? {} : { env: attempt.env }),
    });
  const run: Run = {
    root,
    attempt,
    source,
    logger: new RecordingLogger(),
    output: outputOf(root, attempt),
    started: performance.now(),
  };
  if (attempt.via === 'cli-text') return runCliText(run);
  if (attempt.via === 'cli') return runCliJson(run);
  return runApi(run);
}

function cliArgv(run: Run, json: boolean): string[] {
  const { root, attempt, output } = run;
  const argv = ['fetch', '--config', configPathIn(root), '--root', root];
  if (json) argv.push('--json');
  argv.push('--url', attempt.url, '--output', output);
  if (attempt.sha256 !== undefined) argv.push('--sha256', attempt.sha256);
  if (attempt.member !== undefined) argv.push('--member', attempt.member);
  return argv;
}

async function runCliText(run: Run): Promise<Outcome> {
  const cli = await runCliInMemory(cliArgv(run, false), {
    overrides: { artifactSource: run.source },
    logger: run.logger,
  });
  const elapsedMs = performance.now() - run.started;
  const failed = /^agent-upgrade: (E_[A-Z_]+): (.*)$/m.exec(cli.stderr);
  return {
    code: cli.exitCode === 0 ? null : ((failed?.[1] as ErrorCode | undefined) ?? 'E_USAGE'),
    message: failed?.[2] ?? '',
    elapsedMs,
    report: null,
    logs: JSON.stringify(run.logger.lines),
    cli,
  };
}

async function runCliJson(run: Run): Promise<Outcome> {
  const cli = await runCliInMemory(cliArgv(run, true), {
    overrides: { artifactSource: run.source },
    logger: run.logger,
  });
  const elapsedMs = performance.now() - run.started;
  const lines = cli.stdout.split('\n').filter((l) => l !== '');
  expect(lines, `one JSON document on stdout, got: ${cli.stdout}`).toHaveLength(1);
  const doc = JSON.parse(lines[0] ?? '{}') as {
    ok: boolean;
    error?: { code: ErrorCode; message: string };
    fetch?: FetchReport;
  };
  return {
    code: doc.ok ? null : (doc.error?.code ?? null),
    message: doc.error?.message ?? '',
    elapsedMs,
    report: doc.fetch ?? null,
    logs: JSON.stringify(run.logger.lines),
    cli,
  };
}

async function runApi(run: Run): Promise<Outcome> {
  const { root, attempt, output } = run;
  const artifact: ArtifactConfig = { ...FAST_ARTIFACT, ...attempt.artifact };
  const agent = { ...FLEX_PROFILE.agent, ...attempt.agent };
  const upgrader = sandboxUpgrader(root, { artifact, agent }, { artifactSource: run.source }, run.logger);
  const result = await upgrader.fetch({ url: attempt.url, sha256: attempt.sha256, member: attempt.member, output });
  const elapsedMs = performance.now() - run.started;
  return {
    code: result.ok ? null : result.failure.code,
    message: result.ok ? '' : result.failure.message,
    elapsedMs,
    report: result.ok ? result.value : null,
    logs: JSON.stringify(run.logger.lines),
    cli: null,
  };
}

/** The CLI reads limits from a config file; written before the "before" snapshot. */
export function writeCliConfig(root: string, attempt: Attempt): void {
  if (attempt.via !== 'cli' && attempt.via !== 'cli-text') return;
  mkdirSync(join(root, 'etc'), { recursive: true });
  const artifact: ArtifactConfig = { ...FAST_ARTIFACT, ...attempt.artifact };
  const config = {
    service: { manager: 'none' },
    artifact,
    ...(attempt.agent === undefined ? {} : { agent: attempt.agent }),
  };
  writeFileSync(configPathIn(root), `${JSON.stringify(config)}\n`);
}
