import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createPinoLogger } from '../../src/adapters/common/logging/pino-logger.js';
import { parseDownloadUrl } from '../../src/domain/common/url-policy.js';

const CANARY = 'CANARY-pino-7d21';

function capture(): { stream: Writable; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('pino logger redaction', () => {
  it('prints a RedactedUrl as its redacted text, and redacts a raw URL string under the url key', () => {
    const sink = capture();
    const logger = createPinoLogger('info', sink.stream);
    const accepted = parseDownloadUrl(
      `https://example.com/a.tar.gz?sig=${CANARY}`,
      { allowHttp: true, requireDigest: false },
      false,
    );
    if (!accepted.ok) throw new Error('url');
    logger.info({ url: accepted.value.url }, 'Redacted value.');
    logger.child({ component: 'x' }).warn({ url: `https://example.com/b?token=${CANARY}` }, 'Raw string.');
    logger.info({ downloadURL: `https://example.com/c?sig=${CANARY}`, token: CANARY }, 'Parameters.');
    const text = sink.text();
    expect(text).not.toContain(CANARY);
    expect(text).toContain('https://example.com/a.tar.gz [query redacted]');
    expect(text.split('\n').filter((line) => line !== '')).toHaveLength(3);
  });
});
