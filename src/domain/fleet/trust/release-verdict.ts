import type { Sha256 } from '../../common/digest.js';
import type { SignedTarget } from '../../common/trust/signed-target.js';
import { locateTarget } from '../../common/trust/target-path.js';
import { formatVersion, parseVersion } from '../../common/version.js';
import type { AgentReleaseSpec, Architecture, Artifact } from '../spec/release-spec.js';

/**
 * The controller checks first (docs/rollouts.md#signed-releases): before a rollout dispatches an
 * AgentRelease, every artifact must be a target the publisher signed, for that architecture and
 * version, with that SHA-256. What a node would refuse is never sent to it.
 */

/** How an artifact differs from what the signed metadata says. */
export type TrustMismatch =
  /** Its downloadURL lies under neither the trusted targets URL nor a mirror, or names no target. */
  | 'OutsideTargets'
  /** No role the delegation tree trusts for the path signs it. */
  | 'NotSigned'
  /** The signed target carries no `version` or `arch` in its custom metadata. */
  | 'NoCustom'
  | 'OtherArch'
  | 'OtherVersion'
  | 'OtherDigest';

export interface ArtifactMismatch {
  readonly arch: Architecture;
  readonly mismatch: TrustMismatch;
  readonly message: string;
}

/** One artifact as the signed metadata vouches for it. */
export interface SignedArtifact {
  readonly arch: Architecture;
  readonly targetPath: string;
  readonly sha256: Sha256;
}

/** What the controller verified, kept in the release's status so a restart plans the same. */
export interface SignedRelease {
  /** The version as the release spec formats it. */
  readonly version: string;
  readonly artifacts: readonly SignedArtifact[];
}

export type ReleaseVerdict =
  | { readonly kind: 'signed'; readonly signed: SignedRelease }
  | {
      readonly kind: 'untrusted';
      /** E_UNTRUSTED: an artifact is not signed as the release says; E_TRUST_METADATA: the metadata cannot be trusted. */
      readonly code: 'E_UNTRUSTED' | 'E_TRUST_METADATA';
      readonly mismatches: readonly ArtifactMismatch[];
      readonly message: string;
    };

/** The target path each artifact names under the trusted bases, `null` for one outside them. */
export function artifactTargetPaths(
  spec: AgentReleaseSpec,
  bases: readonly string[],
): readonly { readonly artifact: Artifact; readonly targetPath: string | null }[] {
  return spec.artifacts.map((artifact) => {
    const located = locateTarget(artifact.downloadURL, bases);
    return { artifact, targetPath: located.ok ? located.value.targetPath : null };
  });
}

/**
 * Judges a release against what the verified metadata says of its artifacts' target paths
 * (`signedByPath`; a path missing from it is unsigned). Every artifact is judged, so the verdict
 * names all that differ, not only the first.
 */
export function judgeRelease(
  spec: AgentReleaseSpec,
  bases: readonly string[],
  signedByPath: ReadonlyMap<string, SignedTarget | null>,
): ReleaseVerdict {
  const signed: SignedArtifact[] = [];
  const mismatches: ArtifactMismatch[] = [];
  for (const { artifact, targetPath } of artifactTargetPaths(spec, bases)) {
    const judged = judgeArtifact(artifact, spec.versionText, targetPath, signedByPath.get(targetPath ?? '') ?? null);
    if ('mismatch' in judged) mismatches.push(judged);
    else signed.push(judged);
  }
  if (mismatches.length > 0)
    return {
      kind: 'untrusted',
      code: 'E_UNTRUSTED',
      mismatches,
      message: mismatches.map((entry) => entry.message).join('; '),
    };
  return { kind: 'signed', signed: { version: spec.versionText, artifacts: signed } };
}

/** The verdict when the repository answered but its metadata cannot be trusted (expired, badly signed). */
export function metadataUntrusted(detail: string): ReleaseVerdict {
  return {
    kind: 'untrusted',
    code: 'E_TRUST_METADATA',
    mismatches: [],
    message: `the signed metadata cannot be trusted: ${detail.slice(0, DETAIL_MAX_CHARS)}`,
  };
}

/** Condition messages are capped by the CRD (4096): a path or a detail is quoted at most this long. */
const DETAIL_MAX_CHARS = 1_000;
const PATH_MAX_CHARS = 200;

function quoted(targetPath: string): string {
  return JSON.stringify(targetPath.length > PATH_MAX_CHARS ? `${targetPath.slice(0, PATH_MAX_CHARS)}…` : targetPath);
}

function judgeArtifact(
  artifact: Artifact,
  versionText: string,
  targetPath: string | null,
  signed: SignedTarget | null,
): SignedArtifact | ArtifactMismatch {
  const { arch } = artifact;
  const differs = (mismatch: TrustMismatch, what: string): ArtifactMismatch => ({
    arch,
    mismatch,
    message: `artifact ${arch}: ${what}`,
  });
  // The URL itself is never quoted: its query may carry a secret (docs/security.md#secrets-in-urls).
  if (targetPath === null)
    return differs('OutsideTargets', 'its downloadURL lies under neither the trusted targets URL nor a mirror');
  const path = quoted(targetPath);
  if (signed === null) return differs('NotSigned', `the trusted metadata signs no target ${path}`);
  if (signed.arch === null || signed.version === null)
    return differs('NoCustom', `the signed target ${path} carries no version or arch in its custom metadata`);
  if (signed.arch !== arch) return differs('OtherArch', `the signed target ${path} is for ${signed.arch}`);
  const version = parseVersion(signed.version);
  const signedVersion = version.ok ? formatVersion(version.value) : null;
  if (signedVersion !== versionText)
    return differs(
      'OtherVersion',
      `the signed target ${path} is version ${JSON.stringify(signed.version.slice(0, 64))}, the release says ${versionText}`,
    );
  if (signed.sha256 !== artifact.sha256)
    return differs(
      'OtherDigest',
      `the signed SHA-256 of ${path} is ${signed.sha256}, the release says ${artifact.sha256}`,
    );
  return { arch, targetPath, sha256: signed.sha256 };
}
