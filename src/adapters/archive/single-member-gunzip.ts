import type { Transform } from 'node:stream';
import { createInflateRaw, crc32 } from 'node:zlib';
import { ArtifactError } from '../../domain/port-errors.js';
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
  let header: Buffer = Buffer.alloc(0);
  let headerDone = false;
  let fedBytes = 0;
  // The last chunks given to the inflater: the 8-byte trailer lies at their end once it stops
  // consuming (more than 8 bytes after the deflate data is an error that needs no bytes).
  const tail = new RecentBytes(TRAILER_BYTES);
  let inflaterEnded = false;
  inflater.once('end', () => {
    inflaterEnded = true;
  });

  const feed = async (chunk: Buffer): Promise<void> => {
    if (chunk.length === 0) return;
    fedBytes += chunk.length;
    tail.add(chunk);
    if (inflaterEnded || inflater.destroyed) return;
    if (!inflater.write(chunk)) await drainedOrDone(inflater);
  };

  // A failure of the input (a dropped connection, a timeout) after the deflate data ended is
  // still a failure: it is kept here and rethrown once the inflated data was read.
  let inputFailure: unknown = null;
  const feeding = (async () => {
    try {
      for await (const piece of input) {
        const chunk = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
        if (headerDone) {
          await feed(chunk);
          continue;
        }
        header = Buffer.concat([header, chunk]);
        const parsed = parseGzipHeader(header);
        if (parsed.kind === 'invalid')
          throw new ArtifactError('E_ARCHIVE_FORMAT', `the archive is not a gzip file: ${parsed.reason}`);
        if (parsed.kind === 'incomplete') {
          if (header.length > GZIP_HEADER_MAX_BYTES)
            throw new ArtifactError('E_ARCHIVE_FORMAT', 'the gzip header is too long');
          continue;
        }
        headerDone = true;
        await feed(header.subarray(parsed.length));
      }
      if (!headerDone)
        throw new ArtifactError(
          header.length === 0 ? 'E_TRUNCATED' : 'E_ARCHIVE_FORMAT',
          'the archive ended inside its gzip header',
        );
      inflater.end();
    } catch (error) {
      inputFailure = error;
      inflater.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  })();

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
  if (inputFailure !== null) throw asGzipError(inputFailure);
  checkTrailer(tail, fedBytes - inflater.bytesWritten, crc, inflated);
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
