import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { releaseArchive } from '../support/archive/index.js';
import { startHostileServer, trickle, type HostileServer } from '../support/http/hostile-server.js';
import { makeScratch } from '../support/real-tree.js';
import { assertBuildCurrent, CLI } from '../support/systemd/systemd-host.js';
import { waitFor } from '../support/wait-for.js';

const MEMBER = process.arch === 'arm64' ? 'aks-flex-node-linux-arm64' : 'aks-flex-node-linux-amd64';
/** Random, so it does not compress: about 1 MiB of archive, trickled over about 10 s. */
const ARCHIVE = releaseArchive(MEMBER, randomBytes(1024 * 1024));

interface Spawned {
  readonly child: ChildProcess;
  readonly stdout: () => string;
  /** The exit code; null when a signal ended it, 'timeout' when it did not exit in `timeoutMs`. */
  exited(timeoutMs: number): Promise<number | null | 'timeout'>;
}

/**
 * An interrupted command stops its work, removes what it staged — the partial download, the
 * demo's sandbox and agent — and exits 128 + the signal's number with E_INTERRUPTED.
 */
describe('interrupted commands clean up and say so', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let spawned: ChildProcess[] = [];
  /** A private TMPDIR for the CLI: the demo's sandbox appears here and nowhere else. */
  const tmp = () => join(scratch.root, 'tmp');

  const run = (args: readonly string[]): Spawned => {
    const child = spawn(process.execPath, [CLI, ...args], {
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, TMPDIR: tmp() },
    });
    spawned.push(child);
    const out: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
    const exit = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
    return {
      child,
      stdout: () => Buffer.concat(out).toString('utf8'),
      exited: (timeoutMs) =>
        Promise.race([exit, new Promise<'timeout'>((done) => setTimeout(() => done('timeout'), timeoutMs).unref())]),
    };
  };
  const errorCode = (stdout: string): string | undefined =>
    (JSON.parse(stdout) as { error?: { code: string } }).error?.code;

  beforeAll(() => assertBuildCurrent());
  beforeEach(() => {
    scratch = makeScratch('agent-upgrade-interrupts-');
    mkdirSync(tmp());
  });
  afterEach(async () => {
    for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of processesMentioning(scratch.root)) killQuietly(pid);
    spawned = [];
    scratch.cleanup();
  });

  describe('fetch', () => {
    let server: HostileServer;
    beforeEach(async () => {
      server = await startHostileServer();
      server.route('/release.tar.gz', trickle(ARCHIVE, { chunkBytes: 2048, intervalMs: 20 }));
    });
    afterEach(async () => server.close());

    it.each([
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const)(
      '%s mid-download: exit %d, E_INTERRUPTED, no output file and no temp file',
      async (signal, exitCode) => {
        const outputDir = join(scratch.root, 'out');
        mkdirSync(outputDir);
        // A host of its own without a service manager: fetch needs nothing else from it.
        const host = join(scratch.root, 'host');
        mkdirSync(join(host, 'etc/aks-flex-node'), { recursive: true });
        writeFileSync(
          join(host, 'etc/aks-flex-node/agent-upgrade.json'),
          JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' } }),
        );
        const fetch = run([
          'fetch',
          '--url',
          server.url('/release.tar.gz'),
          '--output',
          join(outputDir, 'agent'),
          '--root',
          host,
          '--json',
        ]);
        // The staged temp file exists once the body is streaming into it.
        expect(await waitFor(() => readdirSync(outputDir).length > 0, 15_000, 20)).toBe(true);
        fetch.child.kill(signal);

        expect(await fetch.exited(15_000)).toBe(exitCode);
        expect(errorCode(fetch.stdout())).toBe('E_INTERRUPTED');
        expect(readdirSync(outputDir)).toEqual([]);
      },
      40_000,
    );
  });

  describe('demo', () => {
    const sandboxes = () => readdirSync(tmp()).filter((name) => name.startsWith('agent-upgrade-demo-'));
    const agentRunning = () => sandboxes().some((name) => processesMentioning(join(tmp(), name)).length > 0);

    it('SIGINT once its agent runs: exit 130, E_INTERRUPTED, no sandbox and no process left', async () => {
      const demo = run(['demo', '--json']);
      expect(await waitFor(agentRunning, 30_000)).toBe(true);
      demo.child.kill('SIGINT');

      expect(await demo.exited(90_000)).toBe(130);
      expect(errorCode(demo.stdout())).toBe('E_INTERRUPTED');
      expect(sandboxes()).toEqual([]);
      expect(processesMentioning(tmp())).toEqual([]);
    }, 150_000);

    it('`demo | head -1`: once its reader is gone it stops, fails, and leaves no sandbox or process', async () => {
      const demo = run(['demo']);
      const stdout = demo.child.stdout;
      if (stdout === null) throw new Error('stdout is piped');
      const firstLine = new Promise<boolean>((done) => stdout.once('data', () => done(true)));
      expect(
        await Promise.race([firstLine, new Promise<boolean>((done) => setTimeout(() => done(false), 30_000).unref())]),
      ).toBe(true);
      // The reader goes away after the first line, as `head -1` does.
      stdout.destroy();

      // 128 + SIGPIPE, as if the write had killed it, but only after cleaning up.
      expect(await demo.exited(90_000)).toBe(141);
      expect(sandboxes()).toEqual([]);
      expect(processesMentioning(tmp())).toEqual([]);
    }, 150_000);
  });
});

/** Live processes whose executable or command line names something under `directory`. */
function processesMentioning(directory: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const exe = existsSync(`/proc/${entry}/exe`) ? readlinkSync(`/proc/${entry}/exe`) : '';
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      const state = /^\S+ \(.*\) (\S)/.exec(readFileSync(`/proc/${entry}/stat`, 'utf8'))?.[1];
      if (state !== 'Z' && (exe.startsWith(directory) || cmdline.includes(directory))) pids.push(Number(entry));
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return pids;
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
