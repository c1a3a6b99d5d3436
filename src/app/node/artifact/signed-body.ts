import { createHash, type Hash } from 'node:crypto';
import { failure } from '../../../domain/common/failure.js';
import type { ArchiveHasher } from '../../../ports/node/archive-extractor.js';
import { raise } from '../../common/failure-signal.js';

/**
 * The body of a signed target as the extractor reads it, counted against the signed length. The
 * extractor hashes it with `hasher`, this body's own, so it is hashed once. The extractor may
 * stop early (a broken gzip stream, a bad tar): its stopping does not close the download, so
 * `drain` can hash the rest and say whether these were the signed bytes at all — a swapped
 * archive of the signed length fails in the gzip layer before its digest is known, and must
 * still be E_UNTRUSTED. `close` ends the download either way.
 */
export class SignedBody implements AsyncIterable<Uint8Array> {
  /** The body was longer or shorter than the signed length. */
  lengthDiffers = false;
  private bytes = 0;
  private readonly hash: Hash = createHash('sha256');
  private readonly source: AsyncIterator<Uint8Array>;
  /** For the extractor: every chunk it reads is hashed there, as it arrives. */
  readonly hasher: ArchiveHasher = {
    update: (chunk) => void this.hash.update(chunk),
    hexDigest: () => this.hash.digest('hex'),
  };

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

  /**
   * Reads and hashes what the extractor left (up to one byte past the signed length); the whole
   * body's SHA-256. Only after the extractor failed: it hashed every chunk it had read.
   */
  async drain(): Promise<string> {
    for (;;) {
      const read = await this.next();
      if (read.done === true) return this.hasher.hexDigest();
      this.hash.update(read.value);
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
    return read;
  }
}
