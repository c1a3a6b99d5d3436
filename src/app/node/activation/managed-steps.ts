import { isLayoutStep, type ActivationStep } from '../../../domain/node/activation/activation-steps.js';
import { invariant } from '../../../domain/common/invariant.js';
import { parseVersion, type Version } from '../../../domain/common/version.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import {
  withCandidate,
  withCandidateDigest,
  withCompleted,
  withSwitchCommitted,
  type UpgradeRecord,
} from '../../../domain/node/record/upgrade-record.js';
import type { AgentUpgradeRequest } from '../../../ports/node/operation-store.js';
import { checkCandidate, type CandidateCheckDependencies, type CheckedCandidate } from '../artifact/check-candidate.js';
import type { FetchDependencies } from '../artifact/fetch-member.js';
import { fetchToFile } from '../artifact/fetch-to-file.js';
import { activeVersion } from '../artifact/running-version.js';
import { unwrap } from '../../common/failure-signal.js';
import type { RecordStore } from '../record/record-store.js';
import type { StateStore } from '../state/state-store.js';
import type { ActivationDependencies } from './activation.js';
import type { SlotEffects } from './slot-effects.js';

/** What the managed path's steps use: the download, the candidate check, the layout and the record. */
export interface ManagedStepDependencies
  extends
    CandidateCheckDependencies,
    FetchDependencies,
    Pick<ActivationDependencies, 'logger' | 'config' | 'arch' | 'engine' | 'effects'> {
  readonly records: RecordStore;
  readonly states: StateStore;
}

/**
 * The managed path's steps (docs/protocol.md#managed-path-rows-1-8), one durable effect each,
 * for the shared step loop: the record writes, the download into the layout's staging file, the
 * candidate check, the layout steps and the container copy. It carries what the steps produce —
 * the record as last written, the verified candidate — from one step to the next.
 */
export class ManagedSteps {
  private current: UpgradeRecord;
  private verified: CheckedCandidate | null = null;
  /** Whether the staging file may exist and is still ours to remove. */
  private staged = false;
  /** The version the publisher signed for the download (signed releases), checked with the candidate. */
  private signedVersion: Version | null = null;
  private readonly effects: SlotEffects;

  constructor(
    private readonly deps: ManagedStepDependencies,
    private readonly request: AgentUpgradeRequest,
    initial: UpgradeRecord,
  ) {
    this.current = initial;
    this.effects = deps.effects;
  }

  /** The record as this process last wrote it. */
  get record(): UpgradeRecord {
    return this.current;
  }

  /** The candidate as `verify-candidate` checked it; every step that needs it comes after. */
  get candidate(): CheckedCandidate {
    invariant(this.verified !== null, 'the candidate is verified before a step uses it');
    return this.verified;
  }

  async run(step: ActivationStep): Promise<void> {
    const { engine } = this.deps;
    const staging = engine.layout.downloadStaging;
    if (isLayoutStep(step))
      return engine.applyLayoutStep(step, { path: staging, digest: this.candidate.digest, isPrivate: true });
    switch (step.kind) {
      case 'record-candidate':
        return this.write(withCandidate(this.current, step.candidate, step.previous));
      case 'download-candidate': {
        this.staged = true;
        const { downloadURL, sha256 } = this.request.parameters;
        const fetched = await fetchToFile(this.deps, { url: downloadURL ?? '', sha256, output: staging });
        this.signedVersion = fetched.signedVersion === null ? null : unwrap(parseVersion(fetched.signedVersion));
        return;
      }
      case 'verify-candidate':
        this.verified = await this.verify(staging);
        return;
      case 'record-digest':
        return this.write(withCandidateDigest(this.current, this.candidate.digest));
      case 'discard-staging':
        return this.discardStaging();
      case 'commit-switch':
        return this.write(withSwitchCommitted(this.current));
      case 'record-completion':
        return this.write(withCompleted(this.current));
      case 'sync-container':
        return this.effects.syncContainer(slotPath(engine.layout, step.slot));
      default:
        return invariant(false, `the managed path has no ${step.kind} step`);
    }
  }

  /** Removes the staging file once (a failed removal is not retried: the next sweep takes it). */
  async discardStaging(): Promise<void> {
    if (!this.staged) return;
    this.staged = false;
    await this.deps.fs.remove(this.deps.engine.layout.downloadStaging);
  }

  private async write(record: UpgradeRecord): Promise<void> {
    await this.deps.records.write(record);
    this.current = record;
  }

  /**
   * The checks of a direct activation, never-downgrade included: only an operation whose
   * parameters say `allowDowngrade: "true"` (a rollout's rollback operations) may take an older
   * version, as `--allow-downgrade` does on the direct path.
   */
  private async verify(staging: string): Promise<CheckedCandidate> {
    const { deps } = this;
    const previous = this.current.previous;
    invariant(previous !== null, 'the candidate slot is recorded before the candidate is verified');
    const state = unwrap(await deps.states.read());
    return checkCandidate(deps, {
      path: staging,
      arch: deps.arch,
      allowScripts: deps.config.agent.allowScripts,
      maxBinaryBytes: deps.config.artifact.maxBinaryBytes,
      requestedVersion: null,
      signedVersion: this.signedVersion,
      currentVersion: await activeVersion(deps, {
        state,
        slot: previous,
        path: slotPath(deps.engine.layout, previous),
        maxBinaryBytes: deps.config.artifact.maxBinaryBytes,
      }),
      allowDowngrade: this.request.parameters['allowDowngrade'] === 'true',
      requestedBy: 'operation',
      state,
      force: false,
    });
  }
}
