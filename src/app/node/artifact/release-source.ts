import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';
import { parseOptionalSha256, type Sha256 } from '../../../domain/common/digest.js';
import { failure } from '../../../domain/common/failure.js';
import type { RedactedUrl } from '../../../domain/common/redacted-url.js';
import { judgeSignedTarget, type TrustedRelease } from '../../../domain/common/trust/signed-target.js';
import { locateTarget, signedDownloadUrl } from '../../../domain/common/trust/target-path.js';
import { targetBases } from '../../../domain/common/trust/trust-settings.js';
import { parseDownloadUrl, type AcceptedSource, type SourceWeakness } from '../../../domain/common/url-policy.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise, unwrap } from '../../common/failure-signal.js';

/** What a download lacks that an operator should hear of: the URL policy's, and signatures. */
export type ReleaseWeakness = SourceWeakness | 'unsigned';

/** Where a release is fetched from and what binds its bytes. */
export interface ReleaseSource {
  readonly url: RedactedUrl;
  readonly expectedDigest: Sha256 | null;
  /** The publisher's signed description, when releases are signed (`trust`). */
  readonly signed: TrustedRelease | null;
  readonly weaknesses: readonly ReleaseWeakness[];
}

export interface ReleaseSourceDependencies {
  readonly config: UpgraderConfig;
  readonly arch: HostArchitecture;
  readonly trust: ReleaseTrust | null;
}

/** A release request that passed the checks that need no I/O. */
export interface CheckedRelease {
  readonly urlText: string;
  readonly requested: Sha256 | null;
  readonly source: AcceptedSource;
}

/** The request's own refusals (E_INVALID_URL, E_INVALID_DIGEST, E_INSECURE_SOURCE), before any I/O. */
export function checkRelease(
  deps: ReleaseSourceDependencies,
  request: { readonly url: string; readonly sha256?: string | undefined },
): CheckedRelease {
  const requested = unwrap(parseOptionalSha256(request.sha256));
  // The signed digest binds a signed release, so a digest-requiring policy is met without one.
  const digestKnown = requested !== null || signsReleases(deps);
  const source = unwrap(parseDownloadUrl(request.url, deps.config.artifact, digestKnown));
  return { urlText: request.url.trim(), requested, source };
}

/**
 * Decides what a checked release request downloads. Without `trust`, the URL and the requested
 * digest (if any) are all there is. With it, the URL must name a target the publisher signed for
 * this architecture (docs/security.md#signed-releases): the signed digest and length bind the
 * download, a requested digest must equal the signed one, and the bytes come from the file
 * consistent snapshots store under that digest. Every refusal comes before a byte of the release.
 */
export async function releaseSource(
  deps: ReleaseSourceDependencies,
  checked: CheckedRelease,
  signal?: AbortSignal,
): Promise<ReleaseSource> {
  const { config, trust } = deps;
  const { urlText, requested, source } = checked;
  if (trust === null || config.trust === null)
    return { url: source.url, expectedDigest: requested, signed: null, weaknesses: [...source.weaknesses, 'unsigned'] };
  const located = unwrap(locateTarget(urlText, targetBases(config.trust)));
  const lookup = await trust.lookup(located.targetPath, signal);
  const signed = unwrap(
    judgeSignedTarget(lookup.target, {
      targetPath: located.targetPath,
      requestedSha256: requested,
      hostArch: deps.arch,
    }),
  );
  if (signed.length > config.artifact.maxArchiveBytes)
    raise(
      failure(
        'E_TOO_LARGE',
        `the signed target is ${signed.length} bytes, more than artifact.maxArchiveBytes (${config.artifact.maxArchiveBytes})`,
      ),
    );
  const download = unwrap(
    parseDownloadUrl(signedDownloadUrl(urlText, signed.sha256, lookup.consistentSnapshot), config.artifact, true),
  );
  return { url: download.url, expectedDigest: signed.sha256, signed, weaknesses: download.weaknesses };
}

function signsReleases(deps: ReleaseSourceDependencies): boolean {
  return deps.trust !== null && deps.config.trust !== null;
}
