import type { Fetcher } from 'tuf-js';
import { DownloadHTTPError } from 'tuf-js/dist/error.js';
import { ArtifactError, TrustError } from '../../../domain/common/port-errors.js';
import { RedactedUrl } from '../../../domain/common/redacted-url.js';
import type { ArtifactSource } from '../../../ports/common/artifact-source.js';

export interface TufFetcherOptions {
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly signal?: AbortSignal;
}

/**
 * tuf-js fetches metadata through this, so that metadata travels the same hardened HTTP as the
 * releases (docs/operations.md#fetch: timeouts, redirect rules, proxies, redacted URLs). Each
 * role's length cap ends the body at the cap (endless data). A 403 or 404 becomes tuf-js's own
 * DownloadHTTPError, the answer "no newer root" it waits for; any other transport failure is
 * kept in `transportFailure`, because tuf-js wraps it into a generic error on some paths.
 */
export class TufFetcher implements Fetcher {
  transportFailure: ArtifactError | null = null;
  /** A timestamp fetched before the refresh began, handed to tuf-js instead of a second request. */
  private prefetched: { readonly url: string; readonly bytes: Buffer; readonly skipRootProbe: boolean } | null = null;

  constructor(
    private readonly source: ArtifactSource,
    private readonly options: TufFetcherOptions,
  ) {}

  /**
   * The refresh that follows gets `bytes` for the timestamp at `url`; with `skipRootProbe`, the
   * probe for root N+1 is answered "none" without a request (TufReleaseTrust decides when).
   */
  usePrefetched(url: string, bytes: Buffer, options: { readonly skipRootProbe: boolean }): void {
    this.prefetched = { url, bytes, skipRootProbe: options.skipRootProbe };
  }

  async downloadBytes(url: string, maxLength: number): Promise<Buffer> {
    const prefetched = this.prefetched;
    if (prefetched !== null && url === prefetched.url && prefetched.bytes.byteLength <= maxLength)
      return prefetched.bytes;
    if (prefetched?.skipRootProbe === true && ROOT_FILE.test(url))
      throw new DownloadHTTPError('no newer root is looked for: the timestamp is the trusted one', 404);
    const redacted = RedactedUrl.fromValidated(new URL(url));
    try {
      const stream = await this.source.open({
        url: redacted,
        // One byte over the cap is how an over-long body shows itself.
        maxBytes: maxLength + 1,
        timeoutMs: this.options.timeoutMs,
        idleTimeoutMs: this.options.idleTimeoutMs,
        ...(this.options.signal === undefined ? {} : { signal: this.options.signal }),
      });
      return await collect(stream.body, maxLength, redacted);
    } catch (error) {
      if (error instanceof ArtifactError && (error.httpStatus === 403 || error.httpStatus === 404))
        throw new DownloadHTTPError(error.message, error.httpStatus);
      if (error instanceof ArtifactError && error.code === 'E_TOO_LARGE') throw oversize(redacted, maxLength);
      if (error instanceof ArtifactError) this.transportFailure = error;
      throw error;
    }
  }

  downloadFile<T>(): Promise<T> {
    // Releases are fetched by the upgrader's own pipeline, bound to the signed length and digest.
    return Promise.reject(new Error('TufFetcher does not download targets'));
  }
}

/** `N.root.json`: the probe for the next root version. */
const ROOT_FILE = /\/\d+\.root\.json$/;

async function collect(body: AsyncIterable<Uint8Array>, maxLength: number, url: RedactedUrl): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > maxLength) throw oversize(url, maxLength);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, bytes);
}

function oversize(url: RedactedUrl, maxLength: number): TrustError {
  return new TrustError(
    'E_TRUST_METADATA',
    `the metadata at ${url.toString()} is larger than its cap of ${maxLength} bytes`,
  );
}
