import {
  checkMemberName,
  limitsFor,
  memberNameFor,
  type HostArchitecture,
} from '../../../domain/node/artifact/archive-rules.js';
import { failure } from '../../../domain/common/failure.js';
import { isCleanAbsolutePath } from '../../../domain/node/layout/posix-path.js';
import { BINARY_MODE, type SlotLayout } from '../../../domain/node/layout/slot-layout.js';
import { signedVersionText } from '../../../domain/common/trust/signed-target.js';
import type { FileDigest } from '../../../ports/node/file-system.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import { EXPIRY_WARNING_MS, expiringSoon } from '../../../domain/common/trust/expiry.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import { fetchMember, type FetchDependencies } from './fetch-member.js';
import { refuseManagedOutput } from './managed-output.js';
import { checkRelease, releaseSource, type ReleaseWeakness } from './release-source.js';

const WEAKNESS_WARNINGS: Readonly<Record<ReleaseWeakness, string>> = {
  'plain-http': 'Downloading over plain HTTP: only the digest, if any, protects the binary.',
  'no-digest': 'No SHA-256 digest was given: only the transport protects the binary.',
  unsigned:
    'Releases are not signed (no trust section, docs/security.md#signed-releases): whoever can name a release URL and digest can run any binary as root on this node.',
};

export interface FetchToFileRequest {
  readonly url: string;
  readonly sha256?: string | undefined;
  readonly member?: string | undefined;
  /** Absolute path of the file to create or replace. */
  readonly output: string;
  readonly onProgress?: (archiveBytes: number, totalBytes: number | null) => void;
  readonly signal?: AbortSignal;
}

export interface FetchReport {
  readonly output: string;
  /** Redacted: scheme, host and path only. */
  readonly url: string;
  readonly member: string;
  readonly archive: FileDigest;
  readonly binaryBytes: number;
  readonly digestVerified: boolean;
  /** The version the publisher signed for this release, when releases are signed (`trust`). */
  readonly signedVersion: string | null;
}

/**
 * `fetch`: validate the request (nothing is opened or written for bad input), then run the
 * artifact pipeline into `output`. Weak sources allowed by policy — plain HTTP, no digest — are
 * logged as warnings. With `refuseOutputsIn` (the operator's `fetch`, which takes no lock), an
 * output that is or reaches a file of that layout is refused with E_USAGE.
 */
export async function fetchToFile(
  deps: FetchDependencies & {
    readonly logger: Logger;
    readonly config: UpgraderConfig;
    readonly arch: HostArchitecture;
    readonly clock: Clock;
    readonly refuseOutputsIn?: SlotLayout;
  },
  request: FetchToFileRequest,
): Promise<FetchReport> {
  const { config } = deps;
  const checked = checkRelease(deps, request);
  const member = unwrap(
    request.member === undefined ? memberNameFor(config.agent.member, deps.arch) : checkMemberName(request.member),
  );
  if (!isCleanAbsolutePath(request.output))
    raise(failure('E_USAGE', '--output must name a file by an absolute, clean path'));
  const layout = deps.refuseOutputsIn;
  // Checked again just before the rename: a directory swapped for a link during the download.
  const guard = layout === undefined ? undefined : () => refuseManagedOutput(deps.fs, layout, request.output);
  await guard?.();
  const existing = await deps.fs.lstat(request.output);
  if (existing !== null && existing.kind !== 'file')
    raise(failure('E_USAGE', `--output ${request.output} exists and is not a regular file`));
  const source = await releaseSource(deps, checked, request.signal);
  const { expectedDigest } = source;
  for (const weakness of source.weaknesses)
    deps.logger.warn({ [LogKeys.url]: source.url, weakness }, WEAKNESS_WARNINGS[weakness]);
  if (deps.trust !== null && source.signed !== null) await warnOfExpiry(deps.trust, deps.clock, deps.logger);
  const fetched = await fetchMember(deps, {
    url: source.url,
    expectedDigest,
    ...(source.signed === null ? {} : { signedLength: source.signed.length }),
    member,
    target: request.output,
    mode: BINARY_MODE,
    limits: limitsFor(config.artifact.maxArchiveBytes, config.artifact.maxBinaryBytes),
    timeoutMs: config.artifact.timeoutMs,
    idleTimeoutMs: config.artifact.idleTimeoutMs,
    ...(request.onProgress === undefined ? {} : { onProgress: request.onProgress }),
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    ...(guard === undefined ? {} : { beforeCommit: guard }),
  });
  deps.logger.info(
    { [LogKeys.url]: source.url, [LogKeys.digest]: fetched.archive.sha256, [LogKeys.path]: request.output },
    'Fetched and verified the release archive.',
  );
  return {
    output: request.output,
    url: source.url.toString(),
    member,
    archive: fetched.archive,
    binaryBytes: fetched.binaryBytes,
    digestVerified: expectedDigest !== null,
    signedVersion: source.signed === null ? null : signedVersionText(source.signed),
  };
}

/** Metadata about to expire stops every update when it does: say so while there is time (a week). */
async function warnOfExpiry(trust: ReleaseTrust, clock: Clock, logger: Logger): Promise<void> {
  for (const role of expiringSoon(await trust.trusted(), clock.nowMs()))
    logger.warn(
      { role: role.role, expires: role.expires },
      `The signed ${role.role} metadata expires ${role.expires} (within ${EXPIRY_WARNING_MS / 86_400_000} days): after that no update can be verified until the publisher signs it again.`,
    );
}
