import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar-stream';
import {
  judgeArchiveEnd,
  judgeEntry,
  type ArchiveLimits,
  type TarEntryHeader,
  type TarEntryType,
} from '../../../domain/node/artifact/archive-rules.js';
import { sha256FromHex } from '../../../domain/common/digest.js';
import { ArtifactError } from '../../../domain/common/port-errors.js';
import type {
  ArchiveExtractor,
  ArchiveHasher,
  ExtractRequest,
  ExtractResult,
} from '../../../ports/node/archive-extractor.js';
import { gunzipSingleMember } from './single-member-gunzip.js';
import { strictTarShape } from './strict-tar-shape.js';

const KNOWN_TYPES: ReadonlySet<string> = new Set<TarEntryType>([
  'file',
  'link',
  'symlink',
  'character-device',
  'block-device',
  'directory',
  'fifo',
  'contiguous-file',
  'pax-header',
  'pax-global-header',
  'gnu-long-link-path',
  'gnu-long-path',
]);

/**
 * The archive pipeline (docs/operations.md#fetch) on node:zlib and tar-stream: compressed bytes
 * are hashed and counted as they arrive, inflated as exactly one gzip member, and parsed as a
 * strict tar whose single entry's bytes go to the caller's sink only after the domain accepted its
 * header.
 */
export class TarGzExtractor implements ArchiveExtractor {
  async extract(request: ExtractRequest): Promise<ExtractResult> {
    const hash = request.hasher ?? nodeHasher();
    let archiveBytes = 0;
    const { limits } = request;
    const metered = async function* (): AsyncGenerator<Uint8Array> {
      for await (const chunk of request.body) {
        archiveBytes += chunk.length;
        if (archiveBytes > limits.maxArchiveBytes)
          throw new ArtifactError('E_TOO_LARGE', `the archive is larger than ${limits.maxArchiveBytes} bytes`);
        hash.update(chunk);
        request.onProgress?.(archiveBytes);
        yield chunk;
      }
    };
    // tar-stream's types omit the option; the default is already strict, stated here on purpose.
    const extract = tar.extract({ allowUnknownFormat: false } as Parameters<typeof tar.extract>[0]);
    const feeding = pipeline(
      Readable.from(strictTarShape(gunzipSingleMember(metered(), limits.maxInflatedBytes))),
      extract,
    );
    // Keeps the pipeline's rejection handled while the entries are read; rethrown below.
    feeding.catch(() => undefined);
    // The sink's own failure (ENOSPC while writing the member) is the cause; tearing the
    // pipeline down after it only adds a "premature close" that must not replace it.
    let sinkFailure = null as { readonly error: unknown } | null;
    const sink = async (chunk: Uint8Array): Promise<void> => {
      try {
        await request.sink(chunk);
      } catch (error) {
        sinkFailure ??= { error };
        throw error;
      }
    };
    let memberBytes: number;
    try {
      memberBytes = await readSingleMember(extract, request.expectedMember, limits, sink);
      await feeding;
    } catch (error) {
      extract.destroy();
      if (sinkFailure !== null) throw sinkFailure.error;
      throw asArchiveError(await preferPipelineError(feeding, error));
    }
    return { archive: { sha256: sha256FromHex(hash.hexDigest()), bytes: archiveBytes }, memberBytes };
  }
}

function nodeHasher(): ArchiveHasher {
  const hash = createHash('sha256');
  return { update: (chunk) => void hash.update(chunk), hexDigest: () => hash.digest('hex') };
}

async function readSingleMember(
  extract: tar.Extract,
  expectedMember: string,
  limits: ArchiveLimits,
  sink: (chunk: Uint8Array) => Promise<void>,
): Promise<number> {
  let entriesSeen = 0;
  let memberBytes = 0;
  for await (const entry of extract) {
    // A PAX size record makes readers disagree about where entries start (a parser differential).
    if ((entry.header as { pax?: Record<string, string> | null }).pax?.size !== undefined) {
      throw new ArtifactError('E_ARCHIVE_FORMAT', 'the archive overrides an entry size with a PAX record');
    }
    const verdict = judgeEntry(toEntryHeader(entry.header), expectedMember, entriesSeen, limits);
    if (!verdict.ok) throw new ArtifactError(verdict.failure.code, verdict.failure.message);
    entriesSeen += 1;
    for await (const chunk of entry as AsyncIterable<Uint8Array>) {
      memberBytes += chunk.length;
      await sink(chunk);
    }
    if (memberBytes !== verdict.value.size)
      throw new ArtifactError('E_TRUNCATED', `the archive member ${expectedMember} is shorter than its header says`);
  }
  const end = judgeArchiveEnd(expectedMember, entriesSeen);
  if (!end.ok) throw new ArtifactError(end.failure.code, end.failure.message);
  return memberBytes;
}

function toEntryHeader(header: tar.Header): TarEntryHeader {
  const type = header.type ?? 'unknown';
  const pax = (header as { pax?: Record<string, string> | null }).pax ?? null;
  return {
    name: header.name,
    type: KNOWN_TYPES.has(type) ? (type as TarEntryType) : 'unknown',
    size: header.size ?? 0,
    pax,
  };
}

/**
 * When the pipeline failed first (a transport error, a gzip error, a cap), that is the cause;
 * the entry loop only saw the stream being torn down.
 */
async function preferPipelineError(feeding: Promise<void>, readError: unknown): Promise<unknown> {
  if (readError instanceof ArtifactError) return readError;
  const outcome = await Promise.race([
    feeding.then(
      () => null,
      (error: unknown) => error,
    ),
    new Promise((resolve) => setImmediate(() => resolve(null))),
  ]);
  // A premature close is what tearing the stream down looks like, never a cause of its own.
  if (outcome === null || (isPrematureClose(outcome) && !isPrematureClose(readError))) return readError;
  return outcome;
}

function isPrematureClose(error: unknown): boolean {
  return (
    typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'ERR_STREAM_PREMATURE_CLOSE'
  );
}

function asArchiveError(error: unknown): unknown {
  if (error instanceof ArtifactError) return error;
  // Only tar-stream's own errors, which carry no code; typed port errors (a FileSystemError
  // naming a path with "tar" in it) and errno errors keep their meaning.
  if (error instanceof Error && !('code' in error) && /tar|header|Unexpected end/i.test(error.message)) {
    return new ArtifactError('E_ARCHIVE_FORMAT', 'the archive is not a valid tar stream');
  }
  // The stream stopped before its end with no other cause on record.
  if (isPrematureClose(error)) return new ArtifactError('E_TRUNCATED', 'the archive stream closed before its end');
  return error;
}
