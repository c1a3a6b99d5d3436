import { isQuarantined, type UpgradeState } from '../record/upgrade-state.js';
import type { Sha256 } from '../../common/digest.js';
import { fail, ok, type Result } from '../../common/failure.js';
import { compareVersions, formatVersion, parseVersion, type Version } from '../../common/version.js';

/** Bytes of `<candidate> version` output kept; the rest is discarded unread. */
export const VERSION_OUTPUT_MAX_BYTES = 4096;
export const VERSION_TIMEOUT_MS = 30_000;

const VERSION_TOKEN = /(?:^|[\s(=:])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)(?=$|[\s),;])/m;

/**
 * Finds the version a candidate printed, e.g. `aks-flex-node version v1.2.3 (commit abc)`. Only
 * the parsed version ever leaves this function: the raw output may hold anything and never
 * reaches logs or status.
 */
export function versionFromOutput(output: string): Result<Version> {
  const match = VERSION_TOKEN.exec(output.slice(0, VERSION_OUTPUT_MAX_BYTES));
  if (match?.[1] === undefined)
    return fail('E_CANDIDATE_VERSION', 'the candidate did not print a version of the form MAJOR.MINOR.PATCH');
  return parseVersion(match[1]);
}

export interface VersionPolicyInput {
  readonly printed: Version;
  /** The version the request names, when it names one. */
  readonly requested: Version | null;
  /**
   * The version the publisher signed for this release (signed releases): a candidate printing
   * another is not what was signed, whatever the request said (TUF's mix-and-match).
   */
  readonly signed?: Version | null;
  /** The version of the binary current runs, when known. */
  readonly current: Version | null;
  readonly allowDowngrade: boolean;
  /**
   * Who asked: the refusal names the switch that request has — the direct path's flag (or the
   * library request's field), or a MachineOperation's parameter (docs/protocol.md#version-rule).
   */
  readonly requestedBy: 'command' | 'operation';
}

const DOWNGRADE_REMEDY: Readonly<Record<VersionPolicyInput['requestedBy'], string>> = {
  command:
    'to install it anyway, run activate or install with --allow-downgrade (a library request: allowDowngrade: true)',
  operation:
    'to install it anyway, create an operation with the parameter allowDowngrade: "true", as a rollout\'s fleet rollback does',
};

export function checkCandidateVersion(input: VersionPolicyInput): Result<Version> {
  const signed = input.signed ?? null;
  if (signed !== null && compareVersions(input.printed, signed) !== 0) {
    return fail(
      'E_UNTRUSTED',
      `the candidate reports version ${formatVersion(input.printed)}, but the publisher signed ${formatVersion(signed)} for this release`,
    );
  }
  if (input.requested !== null && compareVersions(input.printed, input.requested) !== 0) {
    return fail(
      'E_VERSION_MISMATCH',
      `the candidate reports version ${formatVersion(input.printed)}, but ${formatVersion(input.requested)} was requested`,
    );
  }
  if (input.current !== null && !input.allowDowngrade && compareVersions(input.printed, input.current) < 0) {
    return fail(
      'E_DOWNGRADE_REFUSED',
      `the candidate version ${formatVersion(input.printed)} is older than the current ${formatVersion(input.current)}; ${DOWNGRADE_REMEDY[input.requestedBy]}`,
    );
  }
  return ok(input.printed);
}

/** A binary whose digest failed before is refused unless the operator forces it. */
export function checkNotQuarantined(state: UpgradeState, digest: Sha256, force: boolean): Result<Sha256> {
  if (isQuarantined(state, digest) && !force) {
    return fail(
      'E_QUARANTINED',
      `the candidate (sha256 ${digest.slice(0, 12)}…) failed before and is quarantined; force to retry it`,
    );
  }
  return ok(digest);
}
