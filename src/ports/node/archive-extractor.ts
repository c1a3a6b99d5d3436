import type { ArchiveLimits } from '../../domain/node/artifact/archive-rules.js';
import type { FileDigest } from './file-system.js';

/**
 * Turns a release archive's byte stream into its one member's bytes (docs/operations.md#fetch):
 * hashes the compressed bytes as they arrive, accepts exactly one gzip member with nothing after
 * it, reads the tar strictly, and hands the member's bytes to `sink` only after the entry's header
 * passed the domain's rules. Every cap is enforced while streaming. Failures are `ArtifactError`s
 * (E_ARCHIVE_FORMAT, E_ARCHIVE_MEMBER*, E_TOO_LARGE, E_TRUNCATED).
 */
/** Hashes the compressed bytes (SHA-256) as the extractor reads them. */
export interface ArchiveHasher {
  update(chunk: Uint8Array): void;
  /** Lower-case hex; called once, after the last update. */
  hexDigest(): string;
}

export interface ExtractRequest {
  readonly body: AsyncIterable<Uint8Array>;
  /**
   * The hasher to use instead of the extractor's own: a caller that must know the digest of a
   * body the extractor gave up on (a signed download) keeps hashing where the extractor stopped.
   */
  readonly hasher?: ArchiveHasher;
  readonly expectedMember: string;
  readonly limits: ArchiveLimits;
  readonly sink: (chunk: Uint8Array) => Promise<void>;
  /** Called with the compressed bytes read so far. */
  readonly onProgress?: (archiveBytes: number) => void;
}

export interface ExtractResult {
  /** SHA-256 and length of the compressed archive, exactly as received. */
  readonly archive: FileDigest;
  readonly memberBytes: number;
}

export interface ArchiveExtractor {
  extract(request: ExtractRequest): Promise<ExtractResult>;
}
