import type { Readable } from 'node:stream';
import { ArtifactError } from '../../../domain/common/port-errors.js';
import type { RedactedUrl } from '../../../domain/common/redacted-url.js';
import { failure, transportError, type AbortCause } from './transport-errors.js';

export interface BodyGuard {
  readonly url: RedactedUrl;
  readonly contentLength: number | null;
  readonly idleTimeoutMs: number;
  readonly abortCause: () => AbortCause;
}

/**
 * The response body as an async iterable that enforces what the transport must: no gap between
 * chunks longer than the idle timeout, and exactly Content-Length bytes when one was declared.
 */
export async function* guardedBody(stream: Readable, guard: BodyGuard): AsyncGenerator<Uint8Array> {
  let received = 0;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(
      () => stream.destroy(failure('E_TIMEOUT', guard.url, `no data arrived for ${guard.idleTimeoutMs} ms`)),
      guard.idleTimeoutMs,
    );
  };
  try {
    arm();
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (guard.contentLength !== null && received > guard.contentLength) {
        throw failure('E_TRUNCATED', guard.url, 'the body is longer than its Content-Length');
      }
      arm();
      yield chunk;
    }
  } catch (error) {
    if (error instanceof ArtifactError) throw error;
    const cause = guard.abortCause();
    // Once the body started, a connection that fails is a body that ended early.
    if (cause === null) {
      const declared = guard.contentLength === null ? '' : ` of ${guard.contentLength}`;
      throw failure('E_TRUNCATED', guard.url, `the connection failed after ${received}${declared} bytes`);
    }
    throw transportError(error, guard.url, cause);
  } finally {
    clearTimeout(timer);
    stream.destroy();
  }
  if (guard.contentLength !== null && received !== guard.contentLength) {
    throw failure('E_TRUNCATED', guard.url, `the body ended after ${received} of ${guard.contentLength} bytes`);
  }
}
