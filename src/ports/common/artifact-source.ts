import type { RedactedUrl } from '../../domain/common/redacted-url.js';

/**
 * Opens a release archive for streaming. The implementation enforces the transport rules of
 * docs/operations.md#fetch (redirects, identity encoding, status 200, length and time limits, TLS)
 * and throws `ArtifactError` with a domain error code; its messages carry only redacted URLs.
 */
export interface ArtifactRequest {
  readonly url: RedactedUrl;
  readonly maxBytes: number;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface ArtifactStream {
  /** Declared length when the server sent one. */
  readonly contentLength: number | null;
  /** The body, exactly as sent (never decompressed). */
  readonly body: AsyncIterable<Uint8Array>;
}

export interface ArtifactSource {
  open(request: ArtifactRequest): Promise<ArtifactStream>;
}
