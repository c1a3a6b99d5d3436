import { linkedSlot } from '../../../domain/node/layout/host-facts.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import { recordedVersion } from '../../../domain/node/record/upgrade-state.js';
import { formatVersion } from '../../../domain/common/version.js';
import { expiringSoon } from '../../../domain/common/trust/expiry.js';
import { trustedMetadataText } from '../../../domain/common/trust/trusted-metadata-text.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { OperationStore, VersionReportWrite } from '../../../ports/node/operation-store.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import { probeVersion } from '../artifact/check-candidate.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { LayoutEngine } from '../layout/layout-engine.js';
import { LogKeys } from '../../common/log-keys.js';
import type { StateStore } from '../state/state-store.js';
import { translatePortError } from '../../common/translate-port-error.js';

export interface AgentVersionReportDependencies {
  readonly fs: FileSystem;
  readonly runner: ProcessRunner;
  readonly clock: Clock;
  readonly engine: LayoutEngine;
  readonly states: StateStore;
  readonly config: UpgraderConfig;
  readonly store: OperationStore;
  readonly logger: Logger;
  /** Signed releases: what was verified, reported beside the version; null without a trust section. */
  readonly trust: ReleaseTrust | null;
}

/** What this machine's Node shows: the agent version, and the trusted metadata of signed releases. */
export interface NodeReport {
  readonly version: string;
  /** Each trusted role's version and expiry (trusted-metadata-text.ts); null when none was verified. */
  readonly trustedMetadata: string | null;
}

export type VersionReportOutcome =
  | VersionReportWrite
  /** This process already wrote (or was refused) this very version: no request. */
  | 'unchanged'
  /** The running version is not known: nothing is written. */
  | 'unknown'
  /** The write failed; it is pending and tried again by `retry`. */
  | 'failed';

/**
 * Version evidence for fleet rollouts (docs/operations.md#what-the-daemon-writes-to-its-node):
 * the agent version this machine runs, written to its Node once per change. `observe` learns the
 * version (under the host lock, once the startup gate is open); `offer` writes it unless it is
 * what this process last wrote; `retry` tries a failed write again. Attempts run one at a time,
 * each with the latest version offered, so a late retry never writes an older one. Nothing here
 * throws a port failure: a report never fails an upgrade or the gate.
 */
export class AgentVersionReport {
  /** The latest report offered. */
  private wanted: NodeReport | null = null;
  /** The report this process last wrote, or was answered `forbidden`/`gone` for. */
  private settled: NodeReport | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: AgentVersionReportDependencies) {}

  /** Whether an offered version is still to be written (its last attempt failed). */
  get pending(): boolean {
    return this.wanted !== null && !sameReport(this.wanted, this.settled);
  }

  /**
   * What runs once the gate is open: the slot current names. Its version is the state file's
   * entry when that describes the very bytes in the slot, else what the binary itself prints
   * (`<slot> version`; a managed upgrade commits the digest only), else unknown. Never the
   * never-downgrade mark: after a rollback that is the version that no longer runs. With signed
   * releases, the trusted metadata goes beside it, and roles about to expire are warned of.
   */
  async observe(): Promise<NodeReport | null> {
    const version = await this.observeVersion();
    return version === null ? null : { version, trustedMetadata: await this.observeTrust() };
  }

  private async observeVersion(): Promise<string | null> {
    const { deps } = this;
    try {
      const slot = linkedSlot(await deps.engine.inspect(), 'current');
      if (slot === null) return null;
      const path = slotPath(deps.engine.layout, slot);
      const state = await deps.states.read();
      const recorded =
        state.ok && state.value.slots[slot]?.version != null
          ? recordedVersion(
              state.value,
              slot,
              (await deps.fs.hashFile(path, deps.config.artifact.maxBinaryBytes)).sha256,
            )
          : null;
      const version = recorded ?? (await probeVersion(deps, path));
      return version === null ? null : formatVersion(version);
    } catch (error) {
      return this.dropped(error, 'The running agent version could not be learnt; it is not reported.', null);
    }
  }

  private async observeTrust(): Promise<string | null> {
    const { trust, clock, logger } = this.deps;
    if (trust === null) return null;
    try {
      const roles = await trust.trusted();
      for (const role of expiringSoon(roles, clock.nowMs()))
        logger.warn(
          { role: role.role, expires: role.expires },
          `The signed ${role.role} metadata expires ${role.expires}: after that no update can be verified until the publisher signs it again.`,
        );
      return trustedMetadataText(roles);
    } catch (error) {
      return this.dropped(error, 'The trusted metadata could not be read; it is not reported.', null);
    }
  }

  /** Writes `report` (null: the version is unknown, nothing written) unless this process already did. */
  offer(report: NodeReport | null): Promise<VersionReportOutcome> {
    this.wanted = report;
    return this.serialised();
  }

  /** Tries the pending write again (a no-op when nothing is pending). */
  retry(): Promise<VersionReportOutcome> {
    return this.serialised();
  }

  private serialised(): Promise<VersionReportOutcome> {
    const attempt = this.queue.then(() => this.attempt());
    this.queue = attempt.catch(() => undefined);
    return attempt;
  }

  private async attempt(): Promise<VersionReportOutcome> {
    const report = this.wanted;
    if (report === null) return 'unknown';
    if (sameReport(report, this.settled)) return 'unchanged';
    try {
      const answer = await this.deps.store.reportAgentVersion(report.version, report.trustedMetadata);
      this.settled = report;
      if (answer !== 'written')
        this.deps.logger.warn(
          { answer, version: report.version },
          answer === 'gone'
            ? 'This machine has no Node object; its agent version is not reported.'
            : "This node may not write its Node's agent-version annotation; it is not reported.",
        );
      return answer;
    } catch (error) {
      return this.dropped(error, 'Reporting the agent version failed; it is retried later.', 'failed');
    }
  }

  /** A port failure is logged and answered with `outcome`; anything else is a defect and propagates. */
  private dropped<T>(error: unknown, message: string, outcome: T): T {
    const translated = translatePortError(error);
    if (translated === null) throw error;
    this.deps.logger.warn({ [LogKeys.code]: translated.code }, message);
    return outcome;
  }
}

function sameReport(a: NodeReport, b: NodeReport | null): boolean {
  return b !== null && a.version === b.version && a.trustedMetadata === b.trustedMetadata;
}
