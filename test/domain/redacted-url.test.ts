import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { RedactedUrl, redactUrlsInText } from '../../src/domain/common/redacted-url.js';

const CANARY = 'CANARY7f3a9c';

const secretUrls: readonly [string, string, string][] = [
  // name, URL text, printable form
  [
    'query',
    `https://acct.blob.core.windows.net/rel/agent.tar.gz?sv=2024&sig=${CANARY}`,
    'https://acct.blob.core.windows.net/rel/agent.tar.gz [query redacted]',
  ],
  [
    'query on http with port',
    `http://mirror.local:8080/a.tgz?token=${CANARY}`,
    'http://mirror.local:8080/a.tgz [query redacted]',
  ],
  ['fragment', `https://example.com/a.tgz#${CANARY}`, 'https://example.com/a.tgz [query redacted]'],
  ['userinfo password', `https://user:${CANARY}@example.com/a.tgz`, 'https://example.com/a.tgz [query redacted]'],
  ['userinfo name', `https://${CANARY}@example.com/a.tgz`, 'https://example.com/a.tgz [query redacted]'],
  [
    'everything',
    `https://u:${CANARY}@example.com:443/a.tgz?x=${CANARY}#${CANARY}`,
    'https://example.com/a.tgz [query redacted]',
  ],
  ['query without a path', `https://example.com?sig=${CANARY}`, 'https://example.com/ [query redacted]'],
  ['empty query', 'https://example.com/a.tgz?', 'https://example.com/a.tgz'],
];

const wrap = (text: string): RedactedUrl => RedactedUrl.fromValidated(new URL(text));

describe('RedactedUrl printable forms', () => {
  it.each(secretUrls)('%s: String() is the printable form', (_name, text, printable) => {
    expect(String(wrap(text))).toBe(printable);
  });

  const renderings: readonly [string, (url: RedactedUrl) => string][] = [
    ['String()', (url) => String(url)],
    ['toString()', (url) => url.toString()],
    ['template literal', (url) => `download ${url} failed`],
    ['string concatenation', (url) => 'download ' + url],
    ['Array.join', (url) => [url, url].join(',')],
    ['JSON.stringify of the URL', (url) => JSON.stringify(url)],
    [
      'JSON.stringify of an object containing it',
      (url) => JSON.stringify({ operation: 'x', source: { url }, list: [url] }),
    ],
    ['util.inspect', (url) => inspect(url)],
    ['util.inspect nested', (url) => inspect({ deep: { deeper: { url } } }, { depth: 10 })],
    ['util.inspect showHidden', (url) => inspect(url, { showHidden: true, depth: Infinity })],
    ['util.inspect without custom inspect', (url) => inspect(url, { customInspect: false, showHidden: true })],
    ['util.format %s %o %O %j', (url) => format('%s %o %O %j', url, url, url, { url })],
    ['Error message', (url) => new Error(`cannot download ${url}`).message],
    ['Error stack', (url) => new Error(`cannot download ${url}`).stack ?? ''],
    ['inspect of an Error with the URL as a property', (url) => inspect(Object.assign(new Error('x'), { url }))],
    ['Object.entries', (url) => JSON.stringify(Object.entries(url))],
    [
      'own property names and values',
      (url) =>
        Object.getOwnPropertyNames(url)
          .map((key) => String((url as unknown as Record<string, unknown>)[key]))
          .join(' '),
    ],
    ['spread copy', (url) => JSON.stringify({ ...url })],
    ['structuredClone', (url) => inspect(structuredClone(url) as unknown, { showHidden: true })],
  ];

  const cases = secretUrls.flatMap(([name, text]) =>
    renderings.map(([how, render]) => [name, how, text, render] as const),
  );

  it.each(cases)('%s: the canary never appears in %s', (_name, _how, text, render) => {
    expect(render(wrap(text))).not.toContain(CANARY);
  });

  it.each(secretUrls)('%s: revealForRequest returns the full URL', (_name, text) => {
    const url = wrap(text);
    expect(url.revealForRequest()).toBe(new URL(text).href);
    if (text.includes(CANARY)) expect(url.revealForRequest()).toContain(CANARY);
  });

  it.each<[string, 'http:' | 'https:', string]>([
    ['https://example.com/a', 'https:', 'example.com'],
    ['https://example.com:8443/a', 'https:', 'example.com:8443'],
    ['http://10.0.0.1/a', 'http:', '10.0.0.1'],
    ['http://[::1]:8080/a', 'http:', '[::1]:8080'],
    ['HTTPS://EXAMPLE.COM/A', 'https:', 'example.com'],
  ])('%j exposes protocol %s and host %s', (text, protocol, host) => {
    const url = wrap(text);
    expect(url.protocol).toBe(protocol);
    expect(url.host).toBe(host);
  });

  it('is frozen', () => {
    const url = wrap(secretUrls[0]![1]);
    expect(Object.isFrozen(url)).toBe(true);
    expect(Object.keys(url).sort()).toEqual(['host', 'protocol']);
  });

  it('a URL without secrets prints unchanged', () => {
    const url = wrap('https://example.com/releases/v1/agent.tar.gz');
    expect(String(url)).toBe('https://example.com/releases/v1/agent.tar.gz');
    expect(JSON.stringify({ url })).toBe('{"url":"https://example.com/releases/v1/agent.tar.gz"}');
    expect(inspect(url)).toBe('RedactedUrl(https://example.com/releases/v1/agent.tar.gz)');
  });
});

describe('redactUrlsInText', () => {
  it.each([
    ['no URL', 'connection reset by peer', 'connection reset by peer'],
    ['URL without secrets', 'GET https://example.com/a.tgz failed', 'GET https://example.com/a.tgz failed'],
    [
      'query',
      `GET https://h.example/a.tgz?sig=${CANARY} failed`,
      'GET https://h.example/a.tgz [query redacted] failed',
    ],
    [
      'query without path',
      `GET https://h.example?sig=${CANARY} failed`,
      'GET https://h.example [query redacted] failed',
    ],
    ['fragment', `see https://h.example/a#${CANARY}`, 'see https://h.example/a [query redacted]'],
    ['userinfo', `https://user:${CANARY}@h.example/a`, 'https://h.example/a [query redacted]'],
    ['userinfo name only', `https://${CANARY}@h.example/a`, 'https://h.example/a [query redacted]'],
    ['password containing @', `https://user:${CANARY}@x@h.example/a`, 'https://h.example/a [query redacted]'],
    ['userinfo without path', `https://user:${CANARY}@h.example`, 'https://h.example [query redacted]'],
    ['port', `https://h.example:8443/a?x=${CANARY}`, 'https://h.example:8443/a [query redacted]'],
    ['IPv6 host', `http://[::1]:8080/a?x=${CANARY}`, 'http://[::1]:8080/a [query redacted]'],
    ['upper-case scheme', `HTTPS://H.EXAMPLE/A?X=${CANARY}`, 'HTTPS://H.EXAMPLE/A [query redacted]'],
    ['other scheme', `ftp://u:${CANARY}@h.example/f`, 'ftp://h.example/f [query redacted]'],
    [
      'scheme glued to a word character',
      `x_https://h.example/a?sig=${CANARY}`,
      'x_https://h.example/a [query redacted]',
    ],
    ['scheme glued to digits', `1https://h.example/a?sig=${CANARY}`, '1https://h.example/a [query redacted]'],
    ['after an equals sign', `url=https://h.example/a?sig=${CANARY}`, 'url=https://h.example/a [query redacted]'],
    ['in parentheses', `(https://h.example/a?sig=${CANARY})`, '(https://h.example/a [query redacted]'],
    [
      'two URLs',
      `https://a.example/x?s=${CANARY} -> https://b.example/y#${CANARY}`,
      'https://a.example/x [query redacted] -> https://b.example/y [query redacted]',
    ],
    [
      'multi-line text',
      `line1 https://a.example/x?s=${CANARY}\nline2 https://b.example/y`,
      'line1 https://a.example/x [query redacted]\nline2 https://b.example/y',
    ],
    ['query and fragment', `https://h.example/a?x=${CANARY}#${CANARY}`, 'https://h.example/a [query redacted]'],
  ])('%s', (_name, text, expected) => {
    const redacted = redactUrlsInText(text);
    expect(redacted).toBe(expected);
    expect(redacted).not.toContain(CANARY);
  });

  it.each([
    ['a quoted URL', `"https://h.example/a?sig=${CANARY}"`],
    ['a JSON document', JSON.stringify({ url: `https://u:${CANARY}@h.example/a?sig=${CANARY}#${CANARY}` })],
    [
      'an axios-style message',
      `Request failed: GET https://h.example/a.tgz?se=2030&sp=r&sig=${CANARY}%3D (ECONNRESET)`,
    ],
    [
      'a RedactedUrl printable form followed by the real URL',
      `${String(wrap(secretUrls[0]![1]))} ${secretUrls[0]![1]}`,
    ],
  ])('removes the canary from %s', (_name, text) => {
    expect(redactUrlsInText(text)).not.toContain(CANARY);
  });

  it.each(secretUrls)('is idempotent on %s', (_name, text) => {
    const once = redactUrlsInText(`error: ${text}`);
    expect(redactUrlsInText(once)).toBe(once);
  });
});
