import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ArtifactError } from '../../src/domain/common/port-errors.js';
import type { ArtifactSource } from '../../src/ports/common/artifact-source.js';
import { releaseArchive, sha256Hex } from '../support/archive/index.js';
import { redirect, serve, stallAfter, stallBeforeHeaders, status, truncate } from '../support/http/hostile-server.js';
import { MEMBER, newCanary, PAYLOAD, useHarness } from './harness.js';

/**
 * Invariant I8 (docs/protocol.md#i8, docs/security.md#secrets-in-urls): a secret carried by the
 * download URL — query, userinfo, fragment, a redirect's Location, proxy credentials — never
 * reaches a failure message, a log line, the CLI's output (JSON or text) or any file. Every
 * transport failure kind is driven once with secrets in every place the case allows; `h.refused` /
 * `h.fetched` check every sink.
 */

const h = useHarness();
const ARCHIVE = releaseArchive(MEMBER, PAYLOAD);
const DIGEST = sha256Hex(ARCHIVE);

/** A presigned-URL-like query with the canary in several parameters. */
function presigned(path: string, secret: string): string {
  return `${path}?X-Amz-Credential=AKIA%2F${secret}&X-Amz-Signature=${secret}&sv=2024&sig=${encodeURIComponent(secret)}`;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('I8 failures of every kind keep the URL secret', () => {
  it.each(['api', 'cli', 'cli-text'] as const)('a 403 whose body and headers echo the secret (%s)', async (via) => {
    const s = await h.server();
    s.route(
      '/a.tgz',
      serve(`<Error><Message>Signature ${h.canary} expired</Message></Error>`, {
        status: 403,
        headers: { 'X-Echo': h.canary },
      }),
    );
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), via }, 'E_HTTP_STATUS');
  });

  it.each(['api', 'cli', 'cli-text'] as const)('connection refused (%s)', async (via) => {
    const port = await closedPort();
    await h.refused({ url: `http://127.0.0.1:${port}${presigned('/a.tgz', h.canary)}`, via }, 'E_NETWORK');
  });

  it('a TLS failure', async () => {
    const s = await h.server({ tls: true, certificate: 'self-signed' });
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), caPem: s.tls?.caPem ?? '', via: 'cli-text' }, 'E_TLS');
  });

  it('a header timeout', async () => {
    const s = await h.server();
    s.route('/a.tgz', stallBeforeHeaders());
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), via: 'cli', withinMs: 2500 }, 'E_TIMEOUT');
  });

  it('an idle timeout in the body', async () => {
    const s = await h.server();
    s.route('/a.tgz', stallAfter(ARCHIVE, 20));
    await h.refused(
      { url: s.url(presigned('/a.tgz', h.canary)), artifact: { idleTimeoutMs: 300 }, withinMs: 2000 },
      'E_TIMEOUT',
    );
  });

  it('a truncated body', async () => {
    const s = await h.server();
    s.route('/a.tgz', truncate(ARCHIVE, { declaredLength: ARCHIVE.length, sendBytes: 30 }));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), via: 'cli-text' }, 'E_TRUNCATED');
  });

  it('a digest mismatch', async () => {
    const s = await h.server();
    s.route('/a.tgz', serve(ARCHIVE));
    await h.refused(
      { url: s.url(presigned('/a.tgz', h.canary)), sha256: '1'.repeat(64), via: 'cli' },
      'E_DIGEST_MISMATCH',
    );
  });

  it('a size cap', async () => {
    const s = await h.server();
    s.route('/a.tgz', serve(ARCHIVE));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), artifact: { maxArchiveBytes: 10 } }, 'E_TOO_LARGE');
  });

  it('an archive format error', async () => {
    const s = await h.server();
    s.route('/a.tgz', serve(`not an archive ${h.canary}`));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), via: 'cli-text' }, 'E_ARCHIVE_FORMAT');
  });

  it('a policy refusal (requireDigest)', async () => {
    const s = await h.server();
    await h.refused(
      { url: s.url(presigned('/a.tgz', h.canary)), artifact: { requireDigest: true }, via: 'cli-text' },
      'E_INSECURE_SOURCE',
    );
  });

  it('an invalid URL with the secret in userinfo, query and fragment at once', async () => {
    const s = await h.server();
    const second = newCanary();
    const url = s.url(presigned('/a.tgz', h.canary)).replace('http://', `http://user:${second}@`) + `#${second}`;
    await h.refused({ url, secrets: [second], via: 'cli-text' }, 'E_INVALID_URL');
  });

  it('an invalid digest next to a secret URL', async () => {
    const s = await h.server();
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), sha256: 'nope', via: 'cli' }, 'E_INVALID_DIGEST');
  });
});

describe("I8 secrets in a redirect's Location", () => {
  it('Location with a fresh signature, then a 404', async () => {
    const s = await h.server();
    const hop = newCanary();
    s.route('/a.tgz', redirect(presigned('/b.tgz', hop)));
    s.route('/b.tgz', status(404, `missing ${hop}`));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), secrets: [hop], via: 'cli-text' }, 'E_HTTP_STATUS');
    expect(s.requests.map((r) => r.path.split('?')[0])).toEqual(['/a.tgz', '/b.tgz']);
  });

  it('Location with userinfo', async () => {
    const s = await h.server();
    const hop = newCanary();
    s.route('/a.tgz', redirect(`http://admin:${hop}@127.0.0.1:1/b.tgz`));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), secrets: [hop], via: 'cli' }, 'E_REDIRECT_REFUSED');
  });

  it('Location with a fragment', async () => {
    const s = await h.server();
    const hop = newCanary();
    s.route('/a.tgz', redirect(`/b.tgz#token=${hop}`));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), secrets: [hop] }, 'E_REDIRECT_REFUSED');
  });

  it('Location downgrading https to http with a signature', async () => {
    const plain = await h.server();
    const secure = await h.server({ tls: true });
    const hop = newCanary();
    secure.route('/a.tgz', redirect(plain.url(presigned('/a.tgz', hop))));
    await h.refused(
      {
        url: secure.url(presigned('/a.tgz', h.canary)),
        caPem: secure.tls?.caPem ?? '',
        secrets: [hop],
        via: 'cli-text',
      },
      'E_REDIRECT_REFUSED',
    );
  });

  it('Location to a closed port with a signature', async () => {
    const s = await h.server();
    const hop = newCanary();
    const port = await closedPort();
    s.route('/a.tgz', redirect(`http://127.0.0.1:${port}${presigned('/b.tgz', hop)}`));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), secrets: [hop] }, 'E_NETWORK');
  });

  it('Location that is not a valid URL and carries the secret', async () => {
    const s = await h.server();
    const hop = newCanary();
    s.route('/a.tgz', redirect(`http://[bad-host/${hop}`));
    await h.refused({ url: s.url(presigned('/a.tgz', h.canary)), secrets: [hop] }, 'E_REDIRECT_REFUSED');
  });

  it('a redirect loop whose every hop carries a secret', async () => {
    const s = await h.server();
    const hop = newCanary();
    s.route('/a.tgz', redirect(presigned('/a.tgz', hop)));
    await h.refused(
      { url: s.url(presigned('/a.tgz', h.canary)), secrets: [hop], via: 'cli-text' },
      'E_TOO_MANY_REDIRECTS',
    );
  });
});

describe('I8 successes keep the secret too (warnings, report, CLI text and JSON)', () => {
  it('no digest over plain http: both warnings are logged, redacted', async () => {
    const s = await h.server();
    s.route('/a.tgz', serve(ARCHIVE));
    const outcome = await h.fetched({ url: s.url(presigned('/a.tgz', h.canary)) }, PAYLOAD);
    expect(outcome.logs).toContain('plain-http');
    expect(outcome.logs).toContain('no-digest');
    expect(outcome.report?.url).toBe(`${s.origin}/a.tgz [query redacted]`);
  });

  it.each(['cli', 'cli-text'] as const)("the CLI's success output (%s)", async (via) => {
    const s = await h.server();
    s.route('/a.tgz', serve(ARCHIVE));
    const outcome = await h.fetched({ url: s.url(presigned('/a.tgz', h.canary)), sha256: DIGEST, via }, PAYLOAD);
    expect(outcome.cli?.stdout).toContain('/a.tgz');
  });

  it('a redirect chain with a new signature at every hop', async () => {
    const s = await h.server();
    const hops = [newCanary(), newCanary()];
    s.route('/a.tgz', redirect(presigned('/b.tgz', hops[0] ?? '')));
    s.route('/b.tgz', redirect(presigned('/c.tgz', hops[1] ?? '')));
    s.route('/c.tgz', serve(ARCHIVE));
    await h.fetched({ url: s.url(presigned('/a.tgz', h.canary)), sha256: DIGEST, secrets: hops, via: 'cli' }, PAYLOAD);
    expect(s.requests).toHaveLength(3);
  });
});

describe('harness self-check: the three checks really fail when violated', () => {
  it('a secret in the failure message is caught', async () => {
    const leaky: ArtifactSource = {
      open: (request) =>
        Promise.reject(
          new ArtifactError(
            'E_NETWORK',
            `failed, token=${new URL(request.url.revealForRequest()).searchParams.get('sig') ?? ''}`,
          ),
        ),
    };
    await expect(
      h.refused({ url: `http://127.0.0.1:1/a.tgz?sig=${h.canary}`, source: leaky }, 'E_NETWORK'),
    ).rejects.toThrow(/failure message/);
  });

  it('a temp file left behind is caught', async () => {
    const littering: ArtifactSource = {
      open: () => {
        writeFileSync(join(h.root, 'out', '.agent.tmp-123456'), 'partial');
        return Promise.reject(new ArtifactError('E_NETWORK', 'failed'));
      },
    };
    await expect(
      h.refused({ url: `http://127.0.0.1:1/a.tgz?sig=${h.canary}`, source: littering }, 'E_NETWORK'),
    ).rejects.toThrow();
  });

  it('a secret written into a file is caught', async () => {
    const writer: ArtifactSource = {
      open: (request) => {
        writeFileSync(join(h.root, 'out', 'agent'), request.url.revealForRequest());
        return Promise.reject(new ArtifactError('E_NETWORK', 'failed'));
      },
    };
    await expect(
      h.refused({ url: `http://127.0.0.1:1/a.tgz?sig=${h.canary}`, source: writer }, 'E_NETWORK'),
    ).rejects.toThrow();
  });

  it('a wrong code is caught', async () => {
    const s = await h.server();
    s.route('/a.tgz', status(404));
    await expect(h.refused({ url: s.url(h.withCanary('/a.tgz')) }, 'E_TIMEOUT')).rejects.toThrow(/E_HTTP_STATUS/);
  });
});
