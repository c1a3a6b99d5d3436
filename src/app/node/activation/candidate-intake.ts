import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';
import type { Sha256 } from '../../../domain/common/digest.js';
import { failure } from '../../../domain/common/failure.js';
import { linkedSlot, type LayoutFacts } from '../../../domain/node/layout/host-facts.js';
import type { UpgradeState } from '../../../domain/node/record/upgrade-state.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import { checkCandidate, type CheckedCandidate } from '../artifact/check-candidate.js';
import { activeVersion } from '../artifact/running-version.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import type { HealthObserver } from '../health/health-progress.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import type { LayoutEngine } from '../layout/layout-engine.js';
import { activeBinary, parseRequestedVersion } from './activation-support.js';

/** What a caller of `activate` asks for: the CLI, or an agent that embeds the library. */
export interface ActivateRequest {
  readonly candidatePath: string;
  readonly requestedVersion?: string | undefined;
  readonly allowDowngrade?: boolean | undefined;
  /** Accept a candidate whose digest is quarantined. */
  readonly force?: boolean | undefined;
  /** Signed releases: the target whose signed length and SHA-256 the candidate must have. */
  readonly signedTarget?: string | undefined;
  /** Signed releases: activate a candidate nobody signed (logged as a warning, shown in `status`). */
  readonly acceptUnsigned?: boolean | undefined;
  /** Aborted by SIGINT/SIGTERM/SIGHUP: after the switch the activation rolls back, then ends. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Hears how the health waits go — the candidate's gate, its watch window, the wait after a
   * rollback — to show them (the CLI's line on a terminal). It never changes a verdict.
   */
  readonly onHealthProgress?: HealthObserver | undefined;
}

/** What the activation runs: a direct request, or what `install` downloaded and verified. */
export interface ActivationInput extends ActivateRequest {
  /**
   * The candidate is already a private copy in the slot directory (a verified download): no
   * snapshot is taken, and the migration keeps it.
   */
  readonly candidateIsPrivate?: boolean;
  /** The version the publisher signed, set by `install` from the signed metadata it verified. */
  readonly signedVersion?: string | undefined;
}

export interface IntakeDependencies {
  readonly fs: FileSystem;
  readonly runner: ProcessRunner;
  readonly clock: Clock;
  readonly engine: LayoutEngine;
  readonly config: UpgraderConfig;
  readonly arch: HostArchitecture;
}

/** Every check that can refuse a direct candidate, run before the first change to the host. */
export async function checkDirectCandidate(
  deps: IntakeDependencies,
  request: ActivationInput,
  state: UpgradeState,
  facts: LayoutFacts,
): Promise<CheckedCandidate> {
  const { config } = deps;
  const active = await activeBinary(deps, facts);
  return checkCandidate(deps, {
    path: request.candidatePath,
    arch: deps.arch,
    allowScripts: config.agent.allowScripts,
    maxBinaryBytes: config.artifact.maxBinaryBytes,
    requestedVersion:
      request.requestedVersion === undefined ? null : unwrap(parseRequestedVersion(request.requestedVersion)),
    signedVersion: request.signedVersion === undefined ? null : unwrap(parseRequestedVersion(request.signedVersion)),
    currentVersion: await activeVersion(deps, {
      state,
      slot: linkedSlot(facts, 'current'),
      path: active?.path ?? null,
      maxBinaryBytes: config.artifact.maxBinaryBytes,
    }),
    allowDowngrade: request.allowDowngrade === true,
    requestedBy: 'command',
    state,
    force: request.force === true,
  });
}

/**
 * A private copy inside the slot directory (the layout's `candidateSnapshot`, a temp of the
 * blue slot, so a crash leaves nothing a sweep would miss). It must hold exactly the bytes
 * that were checked: a candidate replaced since then is refused.
 */
export async function snapshotCandidate(
  deps: IntakeDependencies,
  candidatePath: string,
  checkedDigest: Sha256,
): Promise<string> {
  const path = deps.engine.layout.candidateSnapshot;
  const copied = await deps.fs.copyFileAtomic(candidatePath, path, {
    mode: 0o700,
    maxBytes: deps.config.artifact.maxBinaryBytes,
  });
  if (copied.sha256 !== checkedDigest) {
    await deps.fs.remove(path);
    raise(failure('E_CANDIDATE_INVALID', `the candidate ${candidatePath} changed while it was being checked`));
  }
  return path;
}
