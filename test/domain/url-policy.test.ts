import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/domain/common/error-codes.js';
import type { Result } from '../../src/domain/common/failure.js';
import { RedactedUrl } from '../../src/domain/common/redacted-url.js';
import {
  checkRedirect,
  parseDownloadUrl,
  URL_TEXT_MAX_LENGTH,
  type SourcePolicy,
  type SourceWeakness,
} from '../../src/domain/common/url-policy.js';

const CANARY = 'CANARYd41d8cd9';
const permissive: SourcePolicy = { allowHttp: true, requireDigest: false };
const strict: SourcePolicy = { allowHttp: false, requireDigest: true };

function expectFailure<T>(result: Result<T>, code: ErrorCode): void {
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect(result.failure.code).toBe(code);
    expect(result.failure.message).not.toContain(CANARY);
    expect(JSON.stringify(result)).not.toContain(CANARY);
  }
}

describe('parseDownloadUrl accepts', () => {
  it.each<[string, string, string]>([
    // text, revealed href, printable
    ['https://example.com/agent.tar.gz', 'https://example.com/agent.tar.gz', 'https://example.com/agent.tar.gz'],
    ['HTTPS://Example.COM/agent.tar.gz', 'https://example.com/agent.tar.gz', 'https://example.com/agent.tar.gz'],
    ['https://example.com', 'https://example.com/', 'https://example.com/'],
    ['https://example.com:8443/a/b.tgz', 'https://example.com:8443/a/b.tgz', 'https://example.com:8443/a/b.tgz'],
    ['https://example.com:443/a.tgz', 'https://example.com/a.tgz', 'https://example.com/a.tgz'],
    ['https://10.0.0.1/a.tgz', 'https://10.0.0.1/a.tgz', 'https://10.0.0.1/a.tgz'],
    ['https://[fd00::1]:8443/a.tgz', 'https://[fd00::1]:8443/a.tgz', 'https://[fd00::1]:8443/a.tgz'],
    [
      `https://acct.blob.core.windows.net/c/a.tgz?sv=1&sig=${CANARY}`,
      `https://acct.blob.core.windows.net/c/a.tgz?sv=1&sig=${CANARY}`,
      'https://acct.blob.core.windows.net/c/a.tgz [query redacted]',
    ],
    ['  https://example.com/a.tgz\n', 'https://example.com/a.tgz', 'https://example.com/a.tgz'],
    ['https://example.com/a%20b.tgz', 'https://example.com/a%20b.tgz', 'https://example.com/a%20b.tgz'],
  ])('%j', (text, href, printable) => {
    const result = parseDownloadUrl(text, permissive, true);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value.url.revealForRequest()).toBe(href);
      expect(String(result.value.url)).toBe(printable);
      expect(result.value.weaknesses).toEqual([]);
    }
  });

  it('accepts exactly URL_TEXT_MAX_LENGTH characters', () => {
    const prefix = 'https://example.com/';
    const text = prefix + 'a'.repeat(URL_TEXT_MAX_LENGTH - prefix.length);
    expect(parseDownloadUrl(text, permissive, true).ok).toBe(true);
  });
});

describe('parseDownloadUrl rejects with E_INVALID_URL', () => {
  it.each([
    ['empty', ''],
    ['whitespace only', ' \n\t '],
    ['not a URL', 'agent.tar.gz'],
    ['absolute path', '/tmp/agent.tar.gz'],
    ['scheme-relative', '//example.com/agent.tar.gz'],
    ['file scheme', 'file:///tmp/agent.tar.gz'],
    ['file scheme with host', 'file://host/tmp/agent.tar.gz'],
    ['ftp scheme', 'ftp://example.com/agent.tar.gz'],
    ['data scheme', 'data:application/gzip;base64,H4sIAAAAAAAA'],
    ['javascript scheme', 'javascript:alert(1)'],
    ['unix scheme', 'unix:/var/run/docker.sock:/agent.tar.gz'],
    ['ws scheme', 'ws://example.com/agent.tar.gz'],
    ['wss scheme', 'wss://example.com/agent.tar.gz'],
    ['gopher scheme', 'gopher://example.com/agent'],
    ['mailto scheme', 'mailto:ops@example.com'],
    ['https without slashes', 'https:example.com/agent.tar.gz'],
    ['https with one slash', 'https:/example.com/agent.tar.gz'],
    ['https with three slashes', 'https:///example.com/agent.tar.gz'],
    ['https with backslashes', 'https:\\\\example.com\\agent.tar.gz'],
    ['missing host', 'https://'],
    ['missing host with path', 'https:///agent.tar.gz'],
    ['missing host with port', 'https://:443/agent.tar.gz'],
    ['missing host with query', 'https://?x=1'],
    ['missing host with fragment', 'https://#x'],
    ['invalid port', 'https://example.com:99999/a'],
    ['invalid host character', 'https://exa<mple.com/a'],
    ['userinfo with password', `https://user:${CANARY}@example.com/agent.tar.gz`],
    ['userinfo name only', `https://${CANARY}@example.com/agent.tar.gz`],
    ['empty userinfo', 'https://@example.com/agent.tar.gz'],
    ['empty password', 'https://user:@example.com/agent.tar.gz'],
    ['colon-only userinfo', 'https://:@example.com/agent.tar.gz'],
    ['userinfo with encoded @', `https://user%40x:${CANARY}@example.com/a`],
    ['userinfo through backslashes', `https:\\\\user:${CANARY}@example.com/a`],
    ['empty userinfo without slashes', 'https:@example.com/a'],
    ['fragment', `https://example.com/agent.tar.gz#${CANARY}`],
    ['bare fragment marker', 'https://example.com/agent.tar.gz#'],
    ['fragment after query', `https://example.com/a.tgz?x=1#${CANARY}`],
    ['inner space', 'https://example.com/agent .tar.gz'],
    ['inner tab', 'https://example.com/\tagent.tar.gz'],
    ['inner newline', `https://example.com/a.tgz\n?sig=${CANARY}`],
    ['inner carriage return', 'https://example.com/a\r.tgz'],
    ['NUL', 'https://example.com/a\0.tgz'],
    ['bell', 'https://example.com/a\u0007.tgz'],
    ['escape', 'https://example.com/a\u001b[31m.tgz'],
    ['DEL', 'https://example.com/a\u007f.tgz'],
    ['C1 next line', 'https://example.com/a\u0085.tgz'],
    ['C1 CSI', 'https://example.com/a\u009b31m.tgz'],
    ['no-break space', 'https://example.com/a\u00a0.tgz'],
    ['line separator', 'https://example.com/a\u2028.tgz'],
    ['ideographic space', 'https://example.com/a\u3000.tgz'],
    ['too long', `https://example.com/${'a'.repeat(URL_TEXT_MAX_LENGTH)}`],
  ])('%s', (_name, text) => {
    for (const policy of [permissive, strict]) {
      for (const hasDigest of [true, false]) {
        expectFailure(parseDownloadUrl(text, policy, hasDigest), 'E_INVALID_URL');
      }
    }
  });
});

describe('parseDownloadUrl policy', () => {
  it.each<[string, SourcePolicy, boolean, ErrorCode | readonly SourceWeakness[]]>([
    ['https://example.com/a.tgz', permissive, true, []],
    ['https://example.com/a.tgz', permissive, false, ['no-digest']],
    ['http://example.com/a.tgz', permissive, true, ['plain-http']],
    ['http://example.com/a.tgz', permissive, false, ['plain-http', 'no-digest']],
    ['HTTP://example.com/a.tgz', permissive, true, ['plain-http']],
    ['https://example.com/a.tgz', strict, true, []],
    ['https://example.com/a.tgz', strict, false, 'E_INSECURE_SOURCE'],
    ['http://example.com/a.tgz', strict, true, 'E_INSECURE_SOURCE'],
    ['http://example.com/a.tgz', strict, false, 'E_INSECURE_SOURCE'],
    ['http://example.com/a.tgz', { allowHttp: false, requireDigest: false }, true, 'E_INSECURE_SOURCE'],
    ['http://example.com/a.tgz', { allowHttp: false, requireDigest: false }, false, 'E_INSECURE_SOURCE'],
    ['https://example.com/a.tgz', { allowHttp: false, requireDigest: false }, false, ['no-digest']],
    ['http://example.com/a.tgz', { allowHttp: true, requireDigest: true }, true, ['plain-http']],
    ['http://example.com/a.tgz', { allowHttp: true, requireDigest: true }, false, 'E_INSECURE_SOURCE'],
    ['https://example.com/a.tgz', { allowHttp: true, requireDigest: true }, false, 'E_INSECURE_SOURCE'],
    [`http://example.com/a.tgz?sig=${CANARY}`, strict, true, 'E_INSECURE_SOURCE'],
    [`https://example.com/a.tgz?sig=${CANARY}`, strict, false, 'E_INSECURE_SOURCE'],
  ])('%j with %j, digest %s → %j', (text, policy, hasDigest, expected) => {
    const result = parseDownloadUrl(text, policy, hasDigest);
    if (typeof expected === 'string') {
      expectFailure(result, expected);
    } else {
      expect(result.ok).toBe(true);
      if (result.ok) expect(result.value.weaknesses).toEqual(expected);
    }
  });
});

describe('checkRedirect', () => {
  const from = (text: string): RedactedUrl => {
    const result = parseDownloadUrl(text, permissive, true);
    if (!result.ok) throw new Error(`test setup: ${text} rejected`);
    return result.value.url;
  };
  const HTTPS_FROM = `https://origin.example/rel/a.tgz?sig=${CANARY}`;
  const HTTP_FROM = `http://origin.example/rel/a.tgz?sig=${CANARY}`;

  it.each([
    ['absolute https', HTTPS_FROM, 'https://cdn.example/x/a.tgz', 'https://cdn.example/x/a.tgz'],
    [
      'absolute https with a secret query',
      HTTPS_FROM,
      `https://cdn.example/x/a.tgz?sig=${CANARY}`,
      `https://cdn.example/x/a.tgz?sig=${CANARY}`,
    ],
    ['relative path', HTTPS_FROM, 'other.tgz', 'https://origin.example/rel/other.tgz'],
    ['relative parent path', HTTPS_FROM, '../v2/a.tgz', 'https://origin.example/v2/a.tgz'],
    ['absolute path', HTTPS_FROM, '/mirror/a.tgz', 'https://origin.example/mirror/a.tgz'],
    ['query only', HTTPS_FROM, '?attempt=2', 'https://origin.example/rel/a.tgz?attempt=2'],
    ['scheme-relative', HTTPS_FROM, '//cdn.example/a.tgz', 'https://cdn.example/a.tgz'],
    ['scheme-relative from http', HTTP_FROM, '//cdn.example/a.tgz', 'http://cdn.example/a.tgz'],
    ['http to https', HTTP_FROM, 'https://cdn.example/a.tgz', 'https://cdn.example/a.tgz'],
    ['http to http', HTTP_FROM, 'http://cdn.example/a.tgz', 'http://cdn.example/a.tgz'],
    ['upper-case scheme', HTTPS_FROM, 'HTTPS://CDN.example/a.tgz', 'https://cdn.example/a.tgz'],
    ['other port', HTTPS_FROM, 'https://cdn.example:8443/a.tgz', 'https://cdn.example:8443/a.tgz'],
  ])('%s is followed', (_name, start, location, expected) => {
    const result = checkRedirect(from(start), location);
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.value.revealForRequest()).toBe(expected);
      expect(String(result.value)).not.toContain(CANARY);
    }
  });

  it.each([
    ['https to http', HTTPS_FROM, 'http://cdn.example/a.tgz'],
    ['https to http with a secret', HTTPS_FROM, `http://cdn.example/a.tgz?sig=${CANARY}`],
    ['https to HTTP upper-case', HTTPS_FROM, 'HTTP://cdn.example/a.tgz'],
    ['https to http on port 443', HTTPS_FROM, 'http://cdn.example:443/a.tgz'],
    ['userinfo in Location', HTTPS_FROM, `https://user:${CANARY}@cdn.example/a.tgz`],
    ['user name in Location', HTTPS_FROM, `https://${CANARY}@cdn.example/a.tgz`],
    ['userinfo in scheme-relative Location', HTTPS_FROM, `//user:${CANARY}@cdn.example/a.tgz`],
    ['fragment in Location', HTTPS_FROM, `https://cdn.example/a.tgz#${CANARY}`],
    ['bare fragment in Location', HTTPS_FROM, 'https://cdn.example/a.tgz#'],
    ['relative Location with a fragment', HTTPS_FROM, `other.tgz#${CANARY}`],
    ['fragment-only Location', HTTPS_FROM, '#top'],
    ['file scheme', HTTPS_FROM, 'file:///etc/shadow'],
    ['file scheme from http', HTTP_FROM, 'file:///etc/shadow'],
    ['ftp scheme', HTTP_FROM, 'ftp://cdn.example/a.tgz'],
    ['data scheme', HTTPS_FROM, 'data:text/plain,hello'],
    ['javascript scheme', HTTPS_FROM, 'javascript:alert(1)'],
    ['ws scheme', HTTP_FROM, 'ws://cdn.example/a'],
    ['unparsable', HTTPS_FROM, 'https://exa<mple/a'],
    ['invalid port', HTTPS_FROM, 'https://cdn.example:99999/a'],
  ])('%s is refused with E_REDIRECT_REFUSED', (_name, start, location) => {
    expectFailure(checkRedirect(from(start), location), 'E_REDIRECT_REFUSED');
  });
});
