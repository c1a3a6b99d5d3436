import type { Sha256 } from '../digest.js';
import { fail, ok, type Result } from '../failure.js';
import { formatVersion, parseVersion, type Version } from '../version.js';

/**
 * A target as the verified metadata describes it (TUF 1.0 §4.5): its length and SHA-256, and the
 * release facts the publisher signed in its `custom` object. `version` and `arch` are null when
 * the publisher signed none (such a target is never installed).
 */
export interface SignedTarget {
  readonly path: string;
  readonly length: number;
  readonly sha256: Sha256;
  readonly version: string | null;
  readonly arch: string | null;
}

/** A signed target fit for this node: the bytes, the version and the architecture are bound. */
export interface TrustedRelease {
  readonly path: string;
  readonly length: number;
  readonly sha256: Sha256;
  readonly version: Version;
}

export interface TrustRequest {
  readonly targetPath: string;
  /** The digest the request named (an operation's `sha256`, `--sha256`), if any. */
  readonly requestedSha256: Sha256 | null;
  readonly hostArch: string;
}

/**
 * Decides whether a release may be installed on the publisher's word: the metadata signs the path,
 * with a version and this node's architecture, and a digest named by the request agrees with the
 * signed one. Every refusal is `E_UNTRUSTED`: whoever named the release is not the publisher.
 */
export function judgeSignedTarget(signed: SignedTarget | null, request: TrustRequest): Result<TrustedRelease> {
  const path = JSON.stringify(request.targetPath);
  if (signed === null) return fail('E_UNTRUSTED', `the trusted metadata signs no target ${path}`);
  if (request.requestedSha256 !== null && request.requestedSha256 !== signed.sha256)
    return fail(
      'E_UNTRUSTED',
      `the requested SHA-256 ${request.requestedSha256} is not the signed one of ${path} (${signed.sha256})`,
    );
  if (signed.arch === null || signed.version === null)
    return fail('E_UNTRUSTED', `the signed target ${path} carries no version or arch in its custom metadata`);
  if (signed.arch !== request.hostArch)
    return fail('E_UNTRUSTED', `the signed target ${path} is for ${signed.arch}, this node is ${request.hostArch}`);
  const version = parseVersion(signed.version);
  if (!version.ok)
    return fail(
      'E_UNTRUSTED',
      `the signed target ${path} carries a version that is not one: ${version.failure.message}`,
    );
  return ok({ path: signed.path, length: signed.length, sha256: signed.sha256, version: version.value });
}

/** The signed version as the candidate must print it. */
export function signedVersionText(release: TrustedRelease): string {
  return formatVersion(release.version);
}
