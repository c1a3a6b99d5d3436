import type { ArchiveLimits } from '../../../domain/node/artifact/archive-rules.js';
import type { Sha256 } from '../../../domain/common/digest.js';
import { failure } from '../../../domain/common/failure.js';
import type { RedactedUrl } from '../../../domain/common/redacted-url.js';
import type { ArchiveExtractor, ExtractRequest } from '../../../ports/node/archive-extractor.js';
import type { ArtifactSource } from '../../../ports/common/artifact-source.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { FileDigest, FileSystem } from '../../../ports/node/file-system.js';
import { FailureSignal, raise } from '../../common/failure-signal.js';
import { SignedBody } from './signed-body.js';

export interface FetchDependencies {
  readonly source: ArtifactSource;
  readonly extractor: ArchiveExtractor;
  readonly fs: FileSystem;
  /** Null: releases are trusted by their URL and digest (no `trust` section). */
  readonly trust: ReleaseTrust | null;
}

export interface FetchMemberRequest {
  readonly url: RedactedUrl;
  readonly expectedDigest: Sha256 | null;
  /**
   * The publisher's signed length when the release is a signed target: the digest and length
   * then bind the download, and a body that differs is E_UNTRUSTED, not a transfer error.
   */
  readonly signedLength?: number;
  readonly member: string;
  readonly target: string;
  readonly mode: number;
  readonly limits: ArchiveLimits;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly onProgress?: (archiveBytes: number, totalBytes: number | null) => void;
  readonly signal?: AbortSignal;
  /** Runs after the archive was verified and just before the member replaces `target`; may refuse. */
  readonly beforeCommit?: () => Promise<void>;
}

export interface FetchedMember {
  readonly archive: FileDigest;
  readonly binaryBytes: number;
}

/**
 * The one artifact pipeline (docs/operations.md#fetch): stream the archive, hash it as it arrives,
 * extract its one member into a temp file next to `target`, and rename it into place only after
 * the whole archive was read and its digest matched. On any failure the temp is removed and
 * `target` is untouched; so too when `signal` aborts (E_INTERRUPTED), which also ends the
 * download. Nothing is re-read from a path after it was verified.
 */
export async function fetchMember(deps: FetchDependencies, request: FetchMemberRequest): Promise<FetchedMember> {
  const { signedLength } = request;
  if (signedLength === undefined) return fetchVerified(deps, request, (body) => ({ body }));
  let signed: SignedBody | null = null;
  try {
    return await fetchVerified(deps, request, (body) => {
      const wrapped = new SignedBody(body, signedLength);
      signed = wrapped;
      return { body: wrapped, hasher: wrapped.hasher };
    });
  } catch (error) {
    const interrupted = request.signal?.aborted === true || isFailure(error, 'E_INTERRUPTED');
    if (signed !== null && !interrupted && (await notTheSignedBytes(signed, error, request.expectedDigest)))
      raise(
        failure(
          'E_UNTRUSTED',
          `the download is not the signed target: ${signedLength} bytes with the signed SHA-256 were expected`,
        ),
      );
    throw error;
  } finally {
    await (signed as SignedBody | null)?.close();
  }
}

/**
 * Whatever broke the download of a signed target (the gzip stream, the tar, the digest), these
 * were not the publisher's bytes when their length or their SHA-256 differs: the rest of the body
 * is read to tell. A body that cannot be read to its end keeps its own code (a transfer failure).
 */
async function notTheSignedBytes(signed: SignedBody, error: unknown, signedDigest: Sha256 | null): Promise<boolean> {
  if (signed.lengthDiffers || isFailure(error, 'E_DIGEST_MISMATCH') || isFailure(error, 'E_UNTRUSTED')) return true;
  if (signedDigest === null) return false;
  try {
    const digest = await signed.drain();
    return signed.lengthDiffers || digest !== signedDigest;
  } catch {
    return signed.lengthDiffers;
  }
}

async function fetchVerified(
  deps: FetchDependencies,
  request: FetchMemberRequest,
  bodyOf: (body: AsyncIterable<Uint8Array>) => Pick<ExtractRequest, 'body' | 'hasher'>,
): Promise<FetchedMember> {
  const stream = await deps.source.open({
    url: request.url,
    maxBytes: request.limits.maxArchiveBytes,
    timeoutMs: request.timeoutMs,
    idleTimeoutMs: request.idleTimeoutMs,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
  });
  const staged = await deps.fs.stageFile(request.target, {
    mode: request.mode,
    maxBytes: request.limits.maxBinaryBytes,
  });
  try {
    const extracted = await deps.extractor.extract({
      ...bodyOf(stream.body),
      expectedMember: request.member,
      limits: request.limits,
      sink: (chunk) => staged.write(chunk),
      onProgress: (bytes) => request.onProgress?.(bytes, stream.contentLength),
    });
    if (request.expectedDigest !== null && extracted.archive.sha256 !== request.expectedDigest) {
      raise(
        failure(
          'E_DIGEST_MISMATCH',
          `the archive's SHA-256 is ${extracted.archive.sha256}, but ${request.expectedDigest} was expected`,
        ),
      );
    }
    const { bytes } = await staged.seal();
    await request.beforeCommit?.();
    // An interrupt that arrived after the last byte still means "stop": nothing new appears.
    if (request.signal?.aborted === true)
      raise(failure('E_INTERRUPTED', 'interrupted by a signal before the file was put in place'));
    await staged.commit();
    return { archive: extracted.archive, binaryBytes: bytes };
  } catch (error) {
    await staged.discard();
    throw error;
  }
}

function isFailure(error: unknown, code: string): boolean {
  return error instanceof FailureSignal && error.failure.code === code;
}
