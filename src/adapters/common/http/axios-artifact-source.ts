import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import axios, { type AxiosResponse } from 'axios';
import { ArtifactError } from '../../../domain/common/port-errors.js';
import type { RedactedUrl } from '../../../domain/common/redacted-url.js';
import { checkRedirect } from '../../../domain/common/url-policy.js';
import type { ArtifactRequest, ArtifactSource, ArtifactStream } from '../../../ports/common/artifact-source.js';
import { guardedBody } from './guarded-body.js';
import { failure, transportError, type AbortCause } from './transport-errors.js';

export const REDIRECTS_MAX = 10;
export const HEADER_TIMEOUT_MS = 30_000;

export interface AxiosSourceOptions {
  /** Extra CA certificates (PEM) to trust besides the system's; tests use a private CA. */
  readonly caPem?: string;
  readonly headerTimeoutMs?: number;
  readonly userAgent?: string;
  /** The environment whose TLS settings are checked; proxy variables are read by axios itself. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Release archives over HTTP(S) with axios (pinned, and used warily: its defaults would follow
 * redirects, decompress and buffer). Redirects are followed by hand so every hop passes the
 * domain's URL rules and https never continues over http; the body is never decompressed (the
 * digest covers the bytes as published); only a plain 200 is accepted; Content-Length is checked
 * against the cap before any body byte is read. Proxy variables (HTTP_PROXY, HTTPS_PROXY,
 * NO_PROXY) are honoured.
 */
export class AxiosArtifactSource implements ArtifactSource {
  private readonly httpsAgent: HttpsAgent | undefined;

  constructor(private readonly options: AxiosSourceOptions = {}) {
    this.httpsAgent = options.caPem === undefined ? undefined : new HttpsAgent({ ca: options.caPem, keepAlive: false });
  }

  async open(request: ArtifactRequest): Promise<ArtifactStream> {
    const env = this.options.env ?? process.env;
    if (env.NODE_TLS_REJECT_UNAUTHORIZED === '0') {
      throw new ArtifactError(
        'E_TLS',
        'refusing to download while NODE_TLS_REJECT_UNAUTHORIZED=0 disables TLS verification',
      );
    }
    const deadline = AbortSignal.timeout(request.timeoutMs);
    const signals = request.signal === undefined ? [deadline] : [deadline, request.signal];
    let url = request.url;
    for (let hop = 0; hop <= REDIRECTS_MAX; hop += 1) {
      const { response, abortCause } = await this.get(url, signals);
      const status = response.status;
      if (status >= 300 && status < 400 && status !== 304) {
        response.data.destroy();
        const location = response.headers.location;
        if (typeof location !== 'string' || location === '')
          throw failure('E_HTTP_STATUS', url, `HTTP status ${status} without a Location`);
        const next = checkRedirect(url, location);
        if (!next.ok) throw new ArtifactError(next.failure.code, next.failure.message);
        url = next.value;
        continue;
      }
      return this.accept(url, response, request, abortCause);
    }
    throw new ArtifactError(
      'E_TOO_MANY_REDIRECTS',
      `download from ${request.url.toString()} failed: more than ${REDIRECTS_MAX} redirects`,
    );
  }

  private accept(
    url: RedactedUrl,
    response: AxiosResponse<Readable>,
    request: ArtifactRequest,
    abortCause: () => AbortCause,
  ): ArtifactStream {
    const reject = (error: ArtifactError): never => {
      response.data.destroy();
      throw error;
    };
    if (response.status !== 200)
      reject(failure('E_HTTP_STATUS', url, `HTTP status ${response.status}`, response.status));
    const encoding = String(response.headers['content-encoding'] ?? 'identity')
      .trim()
      .toLowerCase();
    if (encoding !== '' && encoding !== 'identity')
      reject(failure('E_ARCHIVE_FORMAT', url, `the server applied Content-Encoding ${encoding.slice(0, 32)}`));
    const contentLength = parseContentLength(response.headers['content-length']);
    if (contentLength === 'invalid')
      return reject(failure('E_HTTP_STATUS', url, 'the Content-Length header is malformed'));
    if (contentLength !== null && contentLength > request.maxBytes)
      reject(failure('E_TOO_LARGE', url, `the archive is ${contentLength} bytes, more than ${request.maxBytes}`));
    return {
      contentLength,
      body: guardedBody(response.data, { url, contentLength, idleTimeoutMs: request.idleTimeoutMs, abortCause }),
    };
  }

  /** One GET, no redirects followed, resolved once the headers arrived. */
  private async get(
    url: RedactedUrl,
    signals: readonly AbortSignal[],
  ): Promise<{ response: AxiosResponse<Readable>; abortCause: () => AbortCause }> {
    const headerTimer = new AbortController();
    const timer = setTimeout(() => headerTimer.abort(), this.options.headerTimeoutMs ?? HEADER_TIMEOUT_MS);
    const abortCause = (): AbortCause => {
      if (signals[0]?.aborted === true) return 'deadline';
      if (signals.slice(1).some((signal) => signal.aborted)) return 'cancelled';
      return headerTimer.signal.aborted ? 'header-timeout' : null;
    };
    try {
      const response = await axios.get<Readable>(url.revealForRequest(), {
        responseType: 'stream',
        decompress: false,
        maxRedirects: 0,
        validateStatus: () => true,
        headers: { 'Accept-Encoding': 'identity', 'User-Agent': this.options.userAgent ?? 'agent-upgrade' },
        signal: AbortSignal.any([...signals, headerTimer.signal]),
        ...(this.httpsAgent === undefined ? {} : { httpsAgent: this.httpsAgent }),
      });
      return { response, abortCause: () => (signals.some((signal) => signal.aborted) ? abortCause() : null) };
    } catch (error) {
      throw transportError(error, url, abortCause());
    } finally {
      clearTimeout(timer);
    }
  }
}

function parseContentLength(value: unknown): number | null | 'invalid' {
  if (value === undefined || value === null || value === '') return null;
  const text = String(value).trim();
  if (!/^\d{1,40}$/.test(text)) return 'invalid';
  // Beyond 2^53 the exact value does not matter: it is far above any cap.
  const length = Number(text);
  return Number.isSafeInteger(length) ? length : Number.MAX_SAFE_INTEGER;
}
