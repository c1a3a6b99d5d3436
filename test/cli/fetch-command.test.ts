import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { releaseArchive, sha256Hex } from '../support/archive/index.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { makeScratch } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const MEMBER = process.arch === 'arm64' ? 'aks-flex-node-linux-arm64' : 'aks-flex-node-linux-amd64';
const CANARY = 'CANARY-fetch-cli-5b1e';
const CONTENT = 'x'.repeat(300_000);

describe('fetch command', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let server: HostileServer;
  const archive = releaseArchive(MEMBER, CONTENT);

  beforeEach(async () => {
    scratch = makeScratch();
    server = await startHostileServer();
    server.route('/release.tar.gz', serve(archive));
  });
  afterEach(async () => {
    await server.close();
    scratch.cleanup();
  });

  const url = (): string => `${server.url('/release.tar.gz')}?sig=${CANARY}`;

  it('writes the verified member, reports the archive digest, and keeps the canary out of the output', async () => {
    const output = join(scratch.root, 'agent');
    const run = await runCliInMemory([
      'fetch',
      '--url',
      url(),
      '--sha256',
      `sha256:${sha256Hex(archive)}`,
      '--output',
      output,
      '--json',
    ]);

    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      ok: true,
      fetch: {
        member: MEMBER,
        output,
        binaryBytes: CONTENT.length,
        archive: { sha256: sha256Hex(archive), bytes: archive.length },
        digestVerified: true,
      },
    });
    expect(readFileSync(output, 'utf8')).toBe(CONTENT);
    expect(`${run.stdout}${run.stderr}`).not.toContain(CANARY);
    expect(server.requests[0]?.headers['accept-encoding']).toBe('identity');
  });

  it('draws a progress bar on a terminal and erases it', async () => {
    const run = await runCliInMemory(['fetch', '--url', url(), '--output', join(scratch.root, 'agent')], { tty: true });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('Downloading [');
    expect(run.stderr.endsWith('\r\u001b[K')).toBe(true);
  });

  it.each([
    ['without a terminal', ['fetch', '--url', '', '--output', ''], false],
    ['with --json on a terminal', ['fetch', '--url', '', '--output', '', '--json'], true],
  ])('draws no progress bar %s', async (_name, argv, tty) => {
    const args = argv.map((arg, index) =>
      argv[index - 1] === '--url' ? url() : argv[index - 1] === '--output' ? join(scratch.root, 'agent') : arg,
    );
    const run = await runCliInMemory(args, { tty });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
  });

  it('fails with E_DIGEST_MISMATCH (exit 1), writes nothing, and leaves no temp file', async () => {
    const output = join(scratch.root, 'agent');
    const run = await runCliInMemory([
      'fetch',
      '--url',
      url(),
      '--sha256',
      '0'.repeat(64),
      '--output',
      output,
      '--json',
    ]);
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_DIGEST_MISMATCH' } });
    expect(existsSync(output)).toBe(false);
    expect(readdirSync(scratch.root)).toEqual([]);
  });

  it('rejects a malformed digest before any request (E_INVALID_DIGEST, exit 2)', async () => {
    const run = await runCliInMemory([
      'fetch',
      '--url',
      url(),
      '--sha256',
      'abc',
      '--output',
      join(scratch.root, 'agent'),
      '--json',
    ]);
    expect(run.exitCode).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ ok: false, error: { code: 'E_INVALID_DIGEST' } });
    expect(server.requests).toEqual([]);
  });

  it('keeps the canary out of usage errors that quote the command line', async () => {
    const run = await runCliInMemory(['fetch', '--url', url(), '--bogus']);
    const jsonRun = await runCliInMemory(['fetch', '--url', url(), '--bogus', '--json']);
    expect(run.exitCode).toBe(2);
    expect(`${run.stdout}${run.stderr}${jsonRun.stdout}${jsonRun.stderr}`).not.toContain(CANARY);
  });
});
