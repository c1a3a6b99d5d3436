import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import { releaseArchive, sha256Hex } from '../support/archive/index.js';
import { type HostileServer, serve } from '../support/http/hostile-server.js';
import { type Attempt, MEMBER, PAYLOAD, useHarness } from './harness.js';

/**
 * Category A: request, configuration and policy. Every refusal happens
 * before any network I/O, so each row also asserts that the (live) server saw no request.
 */

const h = useHarness();
const ARCHIVE = releaseArchive(MEMBER, PAYLOAD);
const DIGEST = sha256Hex(ARCHIVE);

async function liveServer(): Promise<HostileServer> {
  const s = await h.server();
  s.route('/a.tgz', serve(ARCHIVE));
  return s;
}

/** `authority` is `127.0.0.1:port` of a live server; `c` is the canary. */
type UrlOf = (authority: string, c: string) => string;

async function refusedOffline(url: UrlOf, code: ErrorCode, extra: Omit<Attempt, 'url'> = {}): Promise<void> {
  const s = await liveServer();
  const authority = new URL(s.origin).host;
  await h.refused({ url: url(authority, h.canary), ...extra }, code);
  expect(s.requests).toEqual([]);
}

describe('A1 URL schemes other than http/https are refused before any I/O', () => {
  const rows: [string, UrlOf][] = [
    ['file: absolute', (_a, c) => `file:///etc/passwd?sig=${c}`],
    ['file: with host', (a, c) => `file://${a}/a.tgz?sig=${c}`],
    ['ftp:', (a, c) => `ftp://${a}/a.tgz?sig=${c}`],
    ['data:', (_a, c) => `data:application/gzip;base64,H4sIAAAAAAAA?sig=${c}`],
    ['javascript:', (a, c) => `javascript:fetch('http://${a}/a.tgz?sig=${c}')`],
    ['unix: socket', (_a, c) => `unix:/var/run/docker.sock:/a.tgz?sig=${c}`],
    ['ws:', (a, c) => `ws://${a}/a.tgz?sig=${c}`],
    ['wss:', (a, c) => `wss://${a}/a.tgz?sig=${c}`],
    ['gopher:', (a, c) => `gopher://${a}/_GET%20/a.tgz?sig=${c}`],
    ['blob:', (a, c) => `blob:http://${a}/a.tgz?sig=${c}`],
    ['view-source:', (a, c) => `view-source:http://${a}/a.tgz?sig=${c}`],
    ['jar:', (a, c) => `jar:http://${a}/a.zip!/a.tgz?sig=${c}`],
    ['a look-alike scheme httpx:', (a, c) => `httpx://${a}/a.tgz?sig=${c}`],
    ['https+unix:', (a, c) => `https+unix://${a}/a.tgz?sig=${c}`],
    ['scheme-relative //host', (a, c) => `//${a}/a.tgz?sig=${c}`],
    ['no scheme at all', (a, c) => `${a}/a.tgz?sig=${c}`],
  ];
  it.each(rows)('%s → E_INVALID_URL', async (_name, url) => {
    await refusedOffline(url, 'E_INVALID_URL');
  });
});

describe('A3 userinfo in the URL is refused (the secret never leaks)', () => {
  const rows: [string, UrlOf][] = [
    ['user and password', (a, c) => `http://user:${c}@${a}/a.tgz`],
    ['user only (the secret)', (a, c) => `http://${c}@${a}/a.tgz`],
    ['empty user, password', (a, c) => `http://:${c}@${a}/a.tgz`],
    ['empty userinfo "@"', (a, c) => `http://@${a}/a.tgz?sig=${c}`],
    ['user, secret in the query', (a, c) => `http://user@${a}/a.tgz?sig=${c}`],
    ['https with a token', (a, c) => `https://token:${c}@${a}/a.tgz`],
    ['authority confusion host@evil', (a, c) => `http://${a}@evil.invalid/a.tgz?sig=${c}`],
    ['encoded "@" inside the password', (a, c) => `http://u:p%40${c}@${a}/a.tgz`],
  ];
  it.each(rows)('%s → E_INVALID_URL', async (_name, url) => {
    await refusedOffline(url, 'E_INVALID_URL');
  });
});

describe('A3 fragments are refused', () => {
  const rows: [string, UrlOf][] = [
    ['secret in the fragment', (a, c) => `http://${a}/a.tgz#${c}`],
    ['empty fragment', (a, c) => `http://${a}/a.tgz?sig=${c}#`],
    ['query then fragment', (a, c) => `http://${a}/a.tgz?sig=${c}#frag`],
    ['query-looking fragment', (a, c) => `http://${a}/a.tgz#?sig=${c}`],
  ];
  it.each(rows)('%s → E_INVALID_URL', async (_name, url) => {
    await refusedOffline(url, 'E_INVALID_URL');
  });
});

describe('A1 URLs without a host are refused', () => {
  const rows: [string, UrlOf][] = [
    ['http:///path', (_a, c) => `http:///a.tgz?sig=${c}`],
    ['http:/path (one slash)', (_a, c) => `http:/a.tgz?sig=${c}`],
    ['http:path (no slash)', (_a, c) => `http:a.tgz?sig=${c}`],
    ['http://?query', (_a, c) => `http://?sig=${c}`],
    ['http://#fragment', (_a, c) => `http://#${c}`],
    ['backslashes http:\\\\host', (a, c) => `http:\\\\${a}\\a.tgz?sig=${c}`],
    ['port without host', (_a, c) => `http://:8080/a.tgz?sig=${c}`],
    ['https:///host/path', (a, c) => `https:///${a}/a.tgz?sig=${c}`],
  ];
  it.each(rows)('%s → E_INVALID_URL', async (_name, url) => {
    await refusedOffline(url, 'E_INVALID_URL');
  });
});

describe('A10 whitespace and control characters inside the URL are refused', () => {
  const rows: [string, string][] = [
    ['space', ' '],
    ['tab', '\t'],
    ['CR LF header injection', '\r\nX-Injected: 1'],
    ['LF', '\n'],
    ['NUL', '\0'],
    ['backspace', '\b'],
    ['DEL', '\x7f'],
    ['C1 NEL', '\u0085'],
    ['no-break space', '\u00a0'],
    ['line separator', '\u2028'],
  ];
  it.each(rows)('%s → E_INVALID_URL', async (_name, bad) => {
    await refusedOffline((a, c) => `http://${a}/a${bad}b.tgz?sig=${c}`, 'E_INVALID_URL');
  });

  it('a URL longer than 8192 characters → E_INVALID_URL', async () => {
    await refusedOffline((a, c) => `http://${a}/a.tgz?sig=${c}&pad=${'x'.repeat(8200)}`, 'E_INVALID_URL');
  });
});

describe('A5 malformed digests are refused before any I/O', () => {
  const hex = DIGEST;
  const rows: [string, string][] = [
    ['63 hex characters', hex.slice(0, 63)],
    ['65 hex characters', `${hex}0`],
    ['a non-hex character', `g${hex.slice(1)}`],
    ['empty after the prefix', 'sha256:'],
    ['prefix and 63 characters', `sha256:${hex.slice(1)}`],
    ['another algorithm prefix', `sha512:${hex}`],
    ['a doubled prefix', `sha256:sha256:${hex}`],
    ['SRI-style dash prefix', `sha256-${hex}`],
    ['0x prefix', `0x${hex}`],
    ['whitespace inside', `${hex.slice(0, 32)} ${hex.slice(32)}`],
    ['128 hex characters (a SHA-512)', hex + hex],
    ['base64 instead of hex', Buffer.from(hex, 'hex').toString('base64')],
    ['full-width digits', hex.replace(/[0-9]/g, (d) => String.fromCharCode(0xff10 + Number(d)))],
  ];
  it.each(rows)('%s → E_INVALID_DIGEST', async (_name, sha256) => {
    await refusedOffline((a, c) => `http://${a}/a.tgz?sig=${c}`, 'E_INVALID_DIGEST', { sha256 });
  });
});

describe('A6 unsafe member names are refused before any I/O', () => {
  const rows: [string, string][] = [
    ['a path with "/"', `bin/${MEMBER}`],
    ['a parent segment', `../${MEMBER}`],
    ['".."', '..'],
    ['"."', '.'],
    ['an absolute path', `/${MEMBER}`],
    ['a backslash', `bin\\${MEMBER}`],
    ['a NUL byte', `${MEMBER}\0.txt`],
    ['a newline', `${MEMBER}\n`],
    ['empty', ''],
    ['a drive letter', `C:${MEMBER}`],
    ['a trailing slash', `${MEMBER}/`],
    ['256 characters', 'a'.repeat(256)],
  ];
  it.each(rows)('--member %s → E_USAGE', async (_name, member) => {
    await refusedOffline((a, c) => `http://${a}/a.tgz?sig=${c}`, 'E_USAGE', { member });
  });

  it.each([
    ['a path template', 'bin/aks-flex-node-linux-{arch}'],
    ['a parent template', '../aks-flex-node-linux-{arch}'],
    ['an absolute template', '/aks-flex-node-linux-{arch}'],
    ['a backslash template', 'bin\\aks-flex-node-linux-{arch}'],
  ])('config agent.member with %s → E_CONFIG (CLI, exit 2)', async (_name, member) => {
    await refusedOffline((a, c) => `http://${a}/a.tgz?sig=${c}`, 'E_CONFIG', { via: 'cli', agent: { member } });
  });
});

describe('A2 source policy: allowHttp / requireDigest tighten the defaults (E_INSECURE_SOURCE)', () => {
  const rows: [string, Omit<Attempt, 'url'>][] = [
    ['plain http with allowHttp=false, even with a digest', { artifact: { allowHttp: false }, sha256: DIGEST }],
    ['no digest with requireDigest=true', { artifact: { requireDigest: true } }],
    ['a whitespace-only digest counts as none', { artifact: { requireDigest: true }, sha256: '   ' }],
    ['both policies, neither met', { artifact: { requireDigest: true, allowHttp: false } }],
    ['plain http with allowHttp=false via the CLI', { artifact: { allowHttp: false }, sha256: DIGEST, via: 'cli' }],
    ['no digest with requireDigest=true via the CLI', { artifact: { requireDigest: true }, via: 'cli' }],
  ];
  it.each(rows)('%s', async (_name, extra) => {
    await refusedOffline((a, c) => `http://${a}/a.tgz?sig=${c}`, 'E_INSECURE_SOURCE', extra);
  });

  it('requireDigest=true with https and no digest → E_INSECURE_SOURCE', async () => {
    const s = await h.server({ tls: true });
    s.route('/a.tgz', serve(ARCHIVE));
    await h.refused(
      { url: s.url(h.withCanary('/a.tgz')), caPem: s.tls?.caPem ?? '', artifact: { requireDigest: true } },
      'E_INSECURE_SOURCE',
    );
    expect(s.requests).toEqual([]);
  });
});

describe('A output path problems are refused before any I/O (E_USAGE)', () => {
  const url: UrlOf = (a, c) => `http://${a}/a.tgz?sig=${c}`;

  it('an existing directory', async () => {
    mkdirSync(join(h.root, 'out', 'agent'));
    await refusedOffline(url, 'E_USAGE', { output: join(h.root, 'out', 'agent') });
  });

  it('a relative path', async () => {
    await refusedOffline(url, 'E_USAGE', { output: 'out/agent' });
  });

  it('a path with a ".." segment', async () => {
    await refusedOffline(url, 'E_USAGE', { output: join(h.root, 'out') + '/../out/agent' });
  });

  it('a trailing slash', async () => {
    await refusedOffline(url, 'E_USAGE', { output: `${join(h.root, 'out', 'agent')}/` });
  });

  it('an existing symlink (never followed)', async () => {
    writeFileSync(join(h.root, 'victim'), 'do not touch\n');
    symlinkSync(join(h.root, 'victim'), join(h.root, 'out', 'agent'));
    await refusedOffline(url, 'E_USAGE', { output: join(h.root, 'out', 'agent') });
  });

  it('an existing FIFO', async () => {
    const fifo = join(h.root, 'out', 'agent');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    await refusedOffline(url, 'E_USAGE', { output: fifo });
  });

  it('an existing directory via the CLI (exit 2)', async () => {
    mkdirSync(join(h.root, 'out', 'agent'));
    await refusedOffline(url, 'E_USAGE', { output: join(h.root, 'out', 'agent'), via: 'cli' });
  });
});

describe('A controls: what the rules must still accept', () => {
  it('upper-case scheme, surrounding whitespace and an upper-case SHA256: prefix are accepted', async () => {
    const s = await liveServer();
    await h.fetched(
      { url: `  HTTP://${new URL(s.origin).host}/a.tgz?sig=${h.canary}  `, sha256: ` SHA256:${DIGEST.toUpperCase()} ` },
      PAYLOAD,
    );
    expect(s.requests).toHaveLength(1);
  });

  it('the CLI fetches the same archive and prints a redacted report', async () => {
    const s = await liveServer();
    const outcome = await h.fetched({ url: s.url(h.withCanary('/a.tgz')), sha256: DIGEST, via: 'cli' }, PAYLOAD);
    expect(outcome.report?.digestVerified).toBe(true);
  });
});
