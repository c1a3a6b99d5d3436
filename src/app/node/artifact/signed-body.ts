import { createHash, type Hash } from 'node:crypto';
import { failure } from '../../../domain/common/failure.js';
import { raise } from '../../common/failure-signal.js';

/**
 * The body of a signed target as the extractor reads it: counted against the signed length and
 * hashed. The extractor may stop early (a broken gzip stream, a bad tar): its stopping does not
 * close the download, so `drain` can read the rest and say whether these were the signed bytes at
 * all — a swapped archive of the signed length fails in the gzip layer before its digest is
 * known, and must still be E_UNTRUSTED. `close` ends the download either way.
 */
export class SignedBody implements AsyncIterable<Uint8Array> {
  /** The body was longer or shorter than the signed length. */
  lengthDiffers = false;
  private bytes = 0;
  private readonly hash: Hash = createHash('sha256');
  private readonly source: AsyncIterator<Uint8Array>;

  constructor(
    body: AsyncIterable<Uint8Array>,
    private readonly signedLength: number,
  ) {
    this.source = body[Symbol.asyncIterator]();
  }

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => this.next(),
      // The extractor stopping leaves the download open for `drain`; `close` ends it.
      return: () => Promise.resolve({ done: true, value: undefined }),
    };
  }

  /** Reads what the extractor left (up to one byte past the signed length); the whole body's SHA-256. */
  async drain(): Promise<string> {
    for (;;) {
      const read = await this.next();
      if (read.done === true) return this.hash.digest('hex');
    }
  }

  async close(): Promise<void> {
    await this.source.return?.();
  }

  private async next(): Promise<IteratorResult<Uint8Array>> {
    const read = await this.source.next();
    if (read.done === true) {
      if (this.bytes !== this.signedLength) this.lengthDiffers = true;
      return read;
    }
    this.bytes += read.value.byteLength;
    if (this.bytes > this.signedLength) {
      this.lengthDiffers = true;
      raise(failure('E_UNTRUSTED', `the download is longer than the signed ${this.signedLength} bytes`));
    }
    this.hash.update(read.value);
    return read;
  }
}
