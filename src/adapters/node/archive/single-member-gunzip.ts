import type { Transform } from 'node:stream';
import { createInflateRaw, crc32, type InflateRaw } from 'node:zlib';
import { ArtifactError } from '../../../domain/common/port-errors.js';
import { GZIP_HEADER_MAX_BYTES, parseGzipHeader } from './gzip-header.js';

const TRAILER_BYTES = 8;
const INFLATE_CHUNK_BYTES = 256 * 1024;

/**
 * Decompresses exactly one gzip member and nothing else (docs/operations.md#fetch). Node's gunzip
 * would quietly continue into a concatenated member or skip zero padding; since the digest covers
 * the compressed bytes, anything after the member's trailer is refused instead. The header is
 * parsed here, the deflate body inflated raw, and the trailer's CRC-32 and length checked. Output
 * is pulled, so a decompression bomb is stopped at `maxInflatedBytes` without ever buffering more
 * than one chunk ahead of the reader.
 */
export async function* gunzipSingleMember(
  input: AsyncIterable<Uint8Array>,
  maxInflatedBytes: number,
): AsyncGenerator<Uint8Array> {
  // Large output chunks: each chunk is one round trip to the zlib thread, the pipeline's pace.
  const inflater = createInflateRaw({ chunkSize: INFLATE_CHUNK_BYTES });
  const member = new MemberFeed(inflater);
  const feeding = member.feedFrom(input);
  let inflated = 0;
  let crc = 0;
  try {
    for await (const out of inflater as AsyncIterable<Buffer>) {
      inflated += out.length;
      if (inflated > maxInflatedBytes)
        throw new ArtifactError('E_TOO_LARGE', `the archive decompresses to more than ${maxInflatedBytes} bytes`);
      crc = crc32(out, crc);
      yield out;
    }
  } catch (error) {
    throw asGzipError(error);
  } finally {
    inflater.destroy();
  }
  await feeding;
  if (member.inputFailure !== null) throw asGzipError(member.inputFailure);
  checkTrailer(member.tail, member.fedBytes - inflater.bytesWritten, crc, inflated);
}

/**
 * The input side: parses the gzip header off the first chunks and writes the rest (the deflate
 * body and the trailer) into the inflater, keeping the last bytes written for the trailer check.
 */
class MemberFeed {
  /**
   * A failure of the input (a dropped connection, a timeout) after the deflate data ended is
   * still a failure: it is kept here and rethrown once the inflated data was read.
   */
  inputFailure: unknown = null;
  fedBytes = 0;
  /**
   * The last chunks given to the inflater: the 8-byte trailer lies at their end once it stops
   * consuming (more than 8 bytes after the deflate data is an error that needs no bytes).
   */
  readonly tail = new RecentBytes(TRAILER_BYTES);
  private header: Buffer = Buffer.alloc(0);
  private headerDone = false;
  private inflaterEnded = false;

  constructor(private readonly inflater: InflateRaw) {
    inflater.once('end', () => {
      this.inflaterEnded = true;
    });
  }

  /** Never rejects: a failure is kept in `inputFailure` and ends the inflater's output with it. */
  async feedFrom(input: AsyncIterable<Uint8Array>): Promise<void> {
    try {
      for await (const piece of input) {
        const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
        if (this.headerDone) await this.feed(chunk);
        else await this.takeHeader(chunk);
      }
      if (!this.headerDone)
        throw new ArtifactError(
          this.header.length === 0 ? 'E_TRUNCATED' : 'E_ARCHIVE_FORMAT',
          'the archive ended inside its gzip header',
        );
      this.inflater.end();
    } catch (error) {
      this.inputFailure = error;
      this.inflater.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  }

  private async takeHeader(chunk: Buffer): Promise<void> {
    this.header = Buffer.concat([this.header, chunk]);
    const parsed = parseGzipHeader(this.header);
    if (parsed.kind === 'invalid')
      throw new ArtifactError('E_ARCHIVE_FORMAT', `the archive is not a gzip file: ${parsed.reason}`);
    if (parsed.kind === 'incomplete') {
      if (this.header.length > GZIP_HEADER_MAX_BYTES)
        throw new ArtifactError('E_ARCHIVE_FORMAT', 'the gzip header is too long');
      return;
    }
    this.headerDone = true;
    await this.feed(this.header.subarray(parsed.length));
  }

  private async feed(chunk: Buffer): Promise<void> {
    if (chunk.length === 0) return;
    this.fedBytes += chunk.length;
    this.tail.add(chunk);
    if (this.inflaterEnded || this.inflater.destroyed) return;
    if (!this.inflater.write(chunk)) await drainedOrDone(this.inflater);
  }
}

function checkTrailer(tail: RecentBytes, afterDeflateBytes: number, crc: number, inflated: number): void {
  if (afterDeflateBytes < TRAILER_BYTES)
    throw new ArtifactError('E_TRUNCATED', 'the archive ends before its gzip trailer');
  if (afterDeflateBytes > TRAILER_BYTES)
    throw new ArtifactError('E_ARCHIVE_FORMAT', 'the archive has data after its gzip member');
  const trailer = tail.last();
  if (trailer.readUInt32LE(0) !== crc >>> 0)
    throw new ArtifactError('E_ARCHIVE_FORMAT', 'the gzip CRC-32 does not match the data');
  if (trailer.readUInt32LE(4) !== inflated % 2 ** 32)
    throw new ArtifactError('E_ARCHIVE_FORMAT', 'the gzip length field does not match the data');
}

function asGzipError(error: unknown): unknown {
  if (error instanceof ArtifactError) return error;
  const code = (error as { code?: unknown }).code;
  if (code === 'Z_BUF_ERROR') return new ArtifactError('E_TRUNCATED', 'the archive ends inside its compressed data');
  if (typeof code === 'string' && code.startsWith('Z_'))
    return new ArtifactError('E_ARCHIVE_FORMAT', 'the compressed data is corrupt');
  return error;
}

/** Resolves on the first of drain, end or close, and leaves no listener behind. */
function drainedOrDone(stream: Transform): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('end', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('end', done);
    stream.on('close', done);
  });
}

/** Keeps just enough of the most recent chunks to read their last `size` bytes. */
class RecentBytes {
  private chunks: Buffer[] = [];
  private total = 0;

  constructor(private readonly size: number) {}

  add(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.total += chunk.length;
    while (this.chunks.length > 1 && this.total - (this.chunks[0]?.length ?? 0) >= this.size) {
      this.total -= this.chunks.shift()?.length ?? 0;
    }
  }

  last(): Buffer {
    const joined = Buffer.concat(this.chunks);
    return joined.subarray(Math.max(0, joined.length - this.size));
  }
}
