import { ArtifactError, TrustError } from '../../../domain/common/port-errors.js';
import { EXPIRY_WARNING_MS, expiringSoon } from '../../../domain/common/trust/expiry.js';
import type { SignedTarget } from '../../../domain/common/trust/signed-target.js';
import { targetBases, type TufTrustSettings } from '../../../domain/common/trust/trust-settings.js';
import type { ReleaseObject } from '../../../domain/fleet/order/snapshot.js';
import { parseReleaseSpec, type AgentReleaseSpec } from '../../../domain/fleet/spec/release-spec.js';
import type { TrustCheck } from '../../../domain/fleet/trust/release-signature.js';
import {
  artifactTargetPaths,
  judgeRelease,
  metadataUntrusted,
  type ReleaseVerdict,
} from '../../../domain/fleet/trust/release-verdict.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { ControllerCluster } from '../../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import { messageOf } from '../../../domain/common/message-of.js';

/** A verdict is checked again this often, so a target removed from the metadata is noticed. */
export const REVERIFY_MS = 10 * 60_000;
/** After a transport failure, the next attempt waits this long, doubling up to the maximum. */
export const TRUST_RETRY_MS = 5_000;
export const TRUST_RETRY_MAX_MS = 5 * 60_000;
/** An expiring role is told again (log and Event) at most this often; the metric always says it. */
export const EXPIRY_REMINDER_MS = 24 * 3_600_000;

/** Signed releases on the controller: the `trust` settings of `--config` and the client of that repository. */
export interface ControllerTrust {
  readonly settings: TufTrustSettings;
  readonly releaseTrust: ReleaseTrust;
}

export interface ReleaseVerifierDeps {
  readonly trust: ControllerTrust;
  readonly cluster: ControllerCluster;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
}

export interface TrustOutcome {
  readonly check: TrustCheck;
  /** Reconcile the release again after this long: the next verification, or the next attempt. */
  readonly recheckAfterMs: number;
}

/** What one round of lookups found: the signed targets by path, or why there are none. */
type Lookups =
  | { readonly kind: 'read'; readonly signedByPath: ReadonlyMap<string, SignedTarget | null> }
  | { readonly kind: 'metadata'; readonly message: string }
  | { readonly kind: 'unavailable'; readonly code: TrustError['code']; readonly message: string };

/**
 * Looks every artifact of a release up in the signed metadata and has the domain judge it
 * (judgeRelease). A verdict is kept for REVERIFY_MS per release and spec, so the watch event of
 * the status it wrote, or a resync, costs no request; it only makes a reconcile cheaper, since
 * the status holds the verdict. A repository that cannot be read is no verdict: the attempts back
 * off (TRUST_RETRY_MS doubling) and the status keeps what it said.
 */
export class ReleaseVerifier {
  private readonly kept = new Map<string, { fingerprint: string; verdict: ReleaseVerdict; checkedMs: number }>();
  private readonly failedAttempts = new Map<string, number>();
  private readonly remindedMs = new Map<string, number>();

  constructor(private readonly d: ReleaseVerifierDeps) {}

  /** The trust check for a release; `null` when its spec is invalid (nothing to verify). */
  async check(release: ReleaseObject, signal?: AbortSignal): Promise<TrustOutcome | null> {
    const parsed = parseReleaseSpec(release.spec);
    if (!parsed.ok) return null;
    const spec = parsed.value;
    const fingerprint = fingerprintOf(release.uid, spec);
    const kept = this.kept.get(release.name);
    const seenMs = this.d.clock.monotonicMs();
    if (kept !== undefined && kept.fingerprint === fingerprint && seenMs - kept.checkedMs < REVERIFY_MS)
      return { check: kept.verdict, recheckAfterMs: REVERIFY_MS - (seenMs - kept.checkedMs) };
    const lookups = await this.lookUp(spec, signal);
    if (lookups.kind === 'unavailable') return this.unavailable(release.name, lookups);
    this.failedAttempts.delete(release.name);
    const bases = targetBases(this.d.trust.settings);
    const verdict =
      lookups.kind === 'metadata'
        ? metadataUntrusted(lookups.message)
        : judgeRelease(spec, bases, lookups.signedByPath);
    this.kept.set(release.name, { fingerprint, verdict, checkedMs: seenMs });
    if (verdict.kind === 'untrusted')
      this.d.logger.warn({ release: release.name, code: verdict.code }, `Not dispatched: ${verdict.message}`);
    await this.warnOfExpiry(release);
    return { check: verdict, recheckAfterMs: REVERIFY_MS };
  }

  /** Drops what is kept for a release that is gone. */
  forget(name: string): void {
    this.kept.delete(name);
    this.failedAttempts.delete(name);
  }

  /** One lookup per located target, in order; the first failure ends the round. */
  private async lookUp(spec: AgentReleaseSpec, signal: AbortSignal | undefined): Promise<Lookups> {
    const signedByPath = new Map<string, SignedTarget | null>();
    for (const { targetPath } of artifactTargetPaths(spec, targetBases(this.d.trust.settings))) {
      if (targetPath === null || signedByPath.has(targetPath)) continue;
      try {
        signedByPath.set(targetPath, (await this.d.trust.releaseTrust.lookup(targetPath, signal)).target);
      } catch (error) {
        if (error instanceof TrustError && error.code === 'E_TRUST_METADATA')
          return { kind: 'metadata', message: error.message };
        // The repository unreachable, or this controller's own cache directory failing: not the publisher's word.
        if (error instanceof ArtifactError || error instanceof TrustError)
          return { kind: 'unavailable', code: error.code, message: error.message };
        throw error;
      }
    }
    return { kind: 'read', signedByPath };
  }

  private unavailable(name: string, lookups: Extract<Lookups, { kind: 'unavailable' }>): TrustOutcome {
    const attempt = (this.failedAttempts.get(name) ?? 0) + 1;
    this.failedAttempts.set(name, attempt);
    const delayMs = Math.min(TRUST_RETRY_MAX_MS, TRUST_RETRY_MS * 2 ** Math.min(attempt - 1, 16));
    this.d.logger.warn(
      { release: name, code: lookups.code, attempt, delayMs },
      `The signed metadata could not be read (${lookups.message}); the release's verdict stands, trying again.`,
    );
    return { check: { kind: 'unavailable', code: lookups.code, message: lookups.message }, recheckAfterMs: delayMs };
  }

  /**
   * Metadata about to expire stops every verification (here and on the nodes) when it does: say
   * so while there is time, in the log and an Event on the release, once a day per role and date.
   */
  private async warnOfExpiry(release: ReleaseObject): Promise<void> {
    const { clock, logger, metrics, cluster } = this.d;
    const nowMs = clock.nowMs();
    const roles = await this.d.trust.releaseTrust.trusted().catch((error: unknown) => {
      logger.warn({ release: release.name }, `The trusted metadata could not be read back: ${messageOf(error)}`);
      return [];
    });
    const soon = new Set(expiringSoon(roles, nowMs).map((role) => role.role));
    metrics.trustMetadataObserved(
      roles.map(({ role, expires }) => {
        const expiresMs = Date.parse(expires);
        return { role, expiresMs: Number.isNaN(expiresMs) ? null : expiresMs, expiringSoon: soon.has(role) };
      }),
    );
    for (const { role, expires } of roles.filter((entry) => soon.has(entry.role))) {
      const key = `${role}@${expires}`;
      const lastMs = this.remindedMs.get(key);
      if (lastMs !== undefined && nowMs - lastMs < EXPIRY_REMINDER_MS) continue;
      this.remindedMs.set(key, nowMs);
      const message = `the signed ${role} metadata expires ${expires} (within ${EXPIRY_WARNING_MS / 86_400_000} days): after that no release can be verified until the publisher signs it again`;
      logger.warn({ role, expires }, `${message[0]?.toUpperCase() ?? ''}${message.slice(1)}.`);
      const regarding = { kind: 'AgentRelease' as const, name: release.name, uid: release.uid };
      await cluster
        .recordEvent({ type: 'Warning', reason: 'TrustMetadataExpiring', message, regarding }, nowMs)
        .catch((error: unknown) => logger.warn({ role }, `The Event could not be recorded: ${messageOf(error)}`));
    }
  }
}

/** What a verdict is about: the release object (uid) and the spec's version and artifacts, not its quarantine. */
function fingerprintOf(uid: string, spec: AgentReleaseSpec): string {
  const artifacts = spec.artifacts.map((artifact) => [artifact.arch, artifact.downloadURL, artifact.sha256]);
  return JSON.stringify([uid, spec.versionText, artifacts]);
}
