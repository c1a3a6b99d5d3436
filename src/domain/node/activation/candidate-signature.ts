import type { Sha256 } from '../../common/digest.js';
import { fail, ok, type Result } from '../../common/failure.js';
import type { TrustedRelease } from '../../common/trust/signed-target.js';

/** How a direct candidate came to the node, as far as signatures go. */
export interface CandidateSignatureRequest {
  /** Releases must be signed here (a `trust` section is configured). */
  readonly trustConfigured: boolean;
  /** `install` verified the download against the signed metadata and passes the signed version on. */
  readonly verifiedDownload: boolean;
  /** `activate --signed-target PATH`: the target whose signed digest the candidate must have. */
  readonly signedTarget: string | null;
  /** `activate --unsigned`: the operator accepts a candidate nobody signed. */
  readonly acceptUnsigned: boolean;
}

/** What must be checked of the candidate's signature before anything changes. */
export type CandidateSignatureDecision =
  /** Releases are not signed on this node: nothing to check (the start-up warning said so). */
  | { readonly kind: 'not-required' }
  /** Already bound by `install`: the download matched the signed length and digest. */
  | { readonly kind: 'verified-download' }
  /** Look the target up in the signed metadata; the candidate's bytes must be that target's. */
  | { readonly kind: 'verify-target'; readonly targetPath: string }
  /** The override: activated unsigned, logged as a warning and remembered for `status`. */
  | { readonly kind: 'accept-unsigned' };

const REMEDY =
  'name its signed target with --signed-target PATH, or accept it unsigned with --unsigned (logged and shown in status)';

/**
 * A separately delivered candidate (`activate FILE`) is installed on a node that trusts signed
 * releases only when its digest is that of a signed binary target for this architecture, or when
 * the operator says, explicitly, to accept it unsigned.
 */
export function decideCandidateSignature(request: CandidateSignatureRequest): Result<CandidateSignatureDecision> {
  if (request.signedTarget !== null && request.acceptUnsigned)
    return fail('E_USAGE', '--signed-target and --unsigned exclude each other');
  if (!request.trustConfigured) {
    if (request.signedTarget !== null)
      return fail('E_USAGE', '--signed-target needs signed releases: the configuration has no trust section');
    return ok({ kind: 'not-required' });
  }
  if (request.verifiedDownload) return ok({ kind: 'verified-download' });
  if (request.signedTarget !== null) return ok({ kind: 'verify-target', targetPath: request.signedTarget });
  if (request.acceptUnsigned) return ok({ kind: 'accept-unsigned' });
  return fail('E_UNTRUSTED', `this node installs signed releases only: ${REMEDY}`);
}

/** The candidate's bytes as checked: its digest and size. */
export interface CandidateBytes {
  readonly digest: Sha256;
  readonly bytes: number;
}

/** The candidate must be, byte for byte, the target the publisher signed (length and SHA-256). */
export function checkSignedBytes(release: TrustedRelease, candidate: CandidateBytes): Result<TrustedRelease> {
  const path = JSON.stringify(release.path);
  if (candidate.bytes !== release.length)
    return fail(
      'E_UNTRUSTED',
      `the candidate is ${candidate.bytes} bytes, the signed target ${path} ${release.length}`,
    );
  if (candidate.digest !== release.sha256)
    return fail(
      'E_UNTRUSTED',
      `the candidate's SHA-256 ${candidate.digest} is not that of the signed target ${path} (${release.sha256})`,
    );
  return ok(release);
}
