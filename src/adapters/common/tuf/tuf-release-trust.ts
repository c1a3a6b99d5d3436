import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Updater, type TargetFile } from 'tuf-js';
import type { Sha256 } from '../../../domain/common/digest.js';
import type { ErrorCode } from '../../../domain/common/error-codes.js';
import { ArtifactError, TrustError } from '../../../domain/common/port-errors.js';
import type { SignedTarget } from '../../../domain/common/trust/signed-target.js';
import type { ArtifactSource } from '../../../ports/common/artifact-source.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ReleaseTrust, TargetLookup, TrustedRole } from '../../../ports/common/release-trust.js';
import { TufFetcher } from './tuf-fetcher.js';
import { signedPart, TrustedMetadataDir } from './trusted-metadata-dir.js';

export interface TufReleaseTrustOptions {
  readonly metadataUrl: string;
  /** trust.cacheDir and trust.rootFile, as host paths (under --root). */
  readonly cacheDir: string;
  readonly rootFile: string;
  readonly timeoutMs: number;
  readonly idleTimeoutMs: number;
  /** Times the root probes (see ROOT_PROBE_INTERVAL_MS). */
  readonly clock: Clock;
  /** See TrustedMetadataDir: the crash-point tests stop a refresh before a durable step. */
  readonly beforeDurableStep?: (step: string) => void;
}

/**
 * How long a refresh that finds the trusted timestamp unchanged may skip the probe for root N+1:
 * a refresh with nothing new then costs one request (the timestamp). A publication that changes
 * anything re-signs the timestamp, and then the root is probed at once; a root changed alone (a
 * root key rotated, nothing else re-signed) is seen within this interval.
 */
export const ROOT_PROBE_INTERVAL_MS = 24 * 3_600_000;
/** tuf-js's own cap on timestamp.json. */
const TIMESTAMP_MAX_BYTES = 16_384;

const SHA256_HEX = /^[0-9a-f]{64}$/;
const ROLES = ['root', 'timestamp', 'snapshot', 'targets'] as const;

/**
 * ReleaseTrust on tuf-js (TUF 1.0 client workflow, §5): every lookup refreshes the metadata in a
 * scratch copy of the trusted directory and commits what it verified (TrustedMetadataDir), the
 * timestamp fetched first so that a refresh with nothing new costs one request (timestampFirst). tuf-js
 * errors become TrustError E_TRUST_METADATA here; a transport failure keeps its own code, so a
 * repository that is only unreachable is retried like a download.
 */
export class TufReleaseTrust implements ReleaseTrust {
  private readonly trustedDir: TrustedMetadataDir;

  constructor(
    private readonly source: ArtifactSource,
    private readonly options: TufReleaseTrustOptions,
  ) {
    this.trustedDir = new TrustedMetadataDir(options.cacheDir, options.rootFile, options.beforeDurableStep);
  }

  /** Throws the TrustError a first lookup would meet for want of a root to trust (TrustedMetadataDir). */
  checkRootAvailable(): void {
    this.trustedDir.checkRootAvailable();
  }

  async lookup(targetPath: string, signal?: AbortSignal): Promise<TargetLookup> {
    const fetcher = new TufFetcher(this.source, {
      timeoutMs: this.options.timeoutMs,
      idleTimeoutMs: this.options.idleTimeoutMs,
      ...(signal === undefined ? {} : { signal }),
    });
    const probesRoot = await this.timestampFirst(fetcher);
    const scratch = onDisk(() => this.trustedDir.stage());
    try {
      const updater = new Updater({
        metadataDir: scratch,
        metadataBaseUrl: this.options.metadataUrl,
        fetcher,
        config: { prefixTargetsWithHash: true },
      });
      await updater.refresh();
      const found = await updater.getTargetInfo(targetPath);
      const target = found === undefined ? null : signedTarget(found);
      const consistent = consistentSnapshot(readFileSync(join(scratch, 'root.json')));
      onDisk(() => this.trustedDir.commit(scratch));
      if (probesRoot) this.trustedDir.markRootProbed(this.options.clock.nowMs());
      return { target, consistentSnapshot: consistent };
    } catch (error) {
      this.trustedDir.discard(scratch);
      throw asTrustFailure(error, fetcher.transportFailure);
    }
  }

  /**
   * Fetches the timestamp before the refresh (TUF's workflow fetches it after the root probe) and
   * hands it to tuf-js, which verifies it as always. When it is byte for byte the trusted one and
   * a refresh (of any process: the time is kept beside the metadata) probed for a new root within
   * ROOT_PROBE_INTERVAL_MS, nothing is new: the probe is skipped and the refresh reads the rest
   * from the trusted files. Whether it probes.
   */
  private async timestampFirst(fetcher: TufFetcher): Promise<boolean> {
    const url = new URL('timestamp.json', this.options.metadataUrl).href;
    let bytes: Buffer;
    try {
      bytes = await fetcher.downloadBytes(url, TIMESTAMP_MAX_BYTES);
    } catch (error) {
      throw asTrustFailure(error, fetcher.transportFailure);
    }
    const trusted = this.trustedDir.read('timestamp');
    const probedAtMs = this.trustedDir.rootProbedAtMs();
    const sinceMs = probedAtMs === null ? null : this.options.clock.nowMs() - probedAtMs;
    const unchanged = trusted !== null && trusted.equals(bytes);
    // A wall clock stepped back (a probe "in the future") counts as no recent probe.
    const recent = sinceMs !== null && sinceMs >= 0 && sinceMs < ROOT_PROBE_INTERVAL_MS;
    fetcher.usePrefetched(url, bytes, { skipRootProbe: unchanged && recent });
    return !(unchanged && recent);
  }

  trusted(): Promise<readonly TrustedRole[]> {
    const roles: TrustedRole[] = [];
    for (const role of ROLES) {
      const bytes = this.trustedDir.read(role);
      const signed = bytes === null ? null : signedPart(bytes);
      if (signed !== null) roles.push({ role, version: signed.version, expires: signed.expires });
    }
    return Promise.resolve(roles);
  }
}

function signedTarget(file: TargetFile): SignedTarget {
  const sha256 = file.hashes.sha256?.toLowerCase();
  // tuf-js verifies the length and every hash it knows; a target without SHA-256 cannot bind a download.
  if (sha256 === undefined || !SHA256_HEX.test(sha256))
    throw new TrustError('E_TRUST_METADATA', `the signed target ${JSON.stringify(file.path)} has no SHA-256`);
  const custom = file.custom;
  return {
    path: file.path,
    length: file.length,
    sha256: sha256 as Sha256,
    version: typeof custom.version === 'string' ? custom.version : null,
    arch: typeof custom.arch === 'string' ? custom.arch : null,
  };
}

function asTrustFailure(error: unknown, transport: ArtifactError | null): Error {
  if (error instanceof TrustError) return error;
  if (transport !== null) return transport;
  if (error instanceof ArtifactError) return error;
  const why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return new TrustError('E_TRUST_METADATA', `the release metadata cannot be trusted: ${why}`);
}

/** Read from the root tuf-js just verified (its trusted set is private). */
function consistentSnapshot(root: Buffer): boolean {
  const signed = (JSON.parse(root.toString('utf8')) as { signed?: { consistent_snapshot?: unknown } }).signed;
  return signed?.consistent_snapshot === true;
}

const ERRNO_CODES: Readonly<Record<string, ErrorCode>> = {
  ENOSPC: 'E_DISK_SPACE',
  EDQUOT: 'E_DISK_SPACE',
  EACCES: 'E_NOT_ROOT',
  EPERM: 'E_NOT_ROOT',
};

/**
 * The trusted directory's own filesystem failures (a full disk, a cache path that is a file) are
 * the host's, not the publisher's: they keep a filesystem code instead of E_TRUST_METADATA.
 */
function onDisk<T>(body: () => T): T {
  try {
    return body();
  } catch (error) {
    if (error instanceof TrustError || !(error instanceof Error) || !('code' in error)) throw error;
    const errno = String(error.code);
    throw new TrustError(ERRNO_CODES[errno] ?? 'E_IO', `the trusted metadata directory cannot be written (${errno})`);
  }
}
