import { type Sha256 } from '../../../domain/common/digest.js';
import { failure, type Failure } from '../../../domain/common/failure.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import {
  brokenSlotProblems,
  checkLayoutShape,
  checkRootOwnership,
  checkTargetsInsideRoot,
  describeKind,
  linkedSlot,
  type LayoutFacts,
} from '../../../domain/node/layout/host-facts.js';
import { resolveLinkTarget } from '../../../domain/node/layout/posix-path.js';
import type { Version } from '../../../domain/common/version.js';
import { planMigration, pointLink, type LayoutAction } from '../../../domain/node/layout/migration-plan.js';
import {
  BINARY_MODE,
  slotPath,
  validateCanonicalLayout,
  type SlotLayout,
} from '../../../domain/node/layout/slot-layout.js';
import type { SlotName } from '../../../domain/node/layout/slot.js';
import type { LayoutStep } from '../../../domain/node/activation/activation-steps.js';
import { planRollback } from '../../../domain/node/activation/upgrade-plan.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import { canonicalRoot, observeLayout, observePath } from './observe-layout.js';
import { describeLayoutAction, runLayoutAction } from './run-layout-action.js';
import type { StateStore } from '../state/state-store.js';
import { unfitSeeds } from './seed-fitness.js';

export interface LayoutEngineOptions {
  readonly layout: SlotLayout;
  readonly binaryMaxBytes: number;
  /** The effective user id; mutating commands on production paths need root. */
  readonly euid: number;
  /** The upgrade state: a repair of current never picks a quarantined or an older binary. */
  readonly states: StateStore;
  /** Asks a binary for its version, so a repair of current never picks one older than committed. */
  readonly probeVersion?: (path: string) => Promise<Version | null>;
}

export interface MigrationReport {
  readonly changed: boolean;
  readonly actions: readonly string[];
  readonly currentSlot: SlotName;
  readonly lastGoodSlot: SlotName;
  readonly serviceAssetsChanged: boolean;
  /**
   * Slots that exist but are not regular files (`E_LAYOUT` each): left alone, and nothing is
   * installed into them until they are removed (docs/operations.md#broken-slots).
   */
  readonly brokenSlots: readonly Failure[];
}

/** The candidate file a layout step installs, and the digest it must have. */
export interface StepCandidate {
  readonly path: string;
  readonly digest: Sha256;
  /** A file of ours (a snapshot, a staged download): moved into the slot rather than copied. */
  readonly isPrivate: boolean;
}

export interface RollbackReport {
  readonly changed: boolean;
  readonly from: SlotName;
  readonly to: SlotName;
  /** As for a migration: what is left for an operator to remove. */
  readonly brokenSlots: readonly Failure[];
}

/** Bound on convergence passes in `migrate` (I10). One pass suffices unless the host races us. */
const MIGRATION_PASSES_MAX = 3;

/**
 * The blue/green layout engine: migrate, the layout steps of an activation, roll back — over
 * ports only. Every change is planned by the domain from fresh observations and executed one
 * action at a time, so a crash anywhere is repaired by simply running the same command again.
 */
export class LayoutEngine {
  constructor(
    private readonly fs: FileSystem,
    private readonly services: ServiceManager,
    private readonly logger: Logger,
    private readonly options: LayoutEngineOptions,
  ) {}

  get layout(): SlotLayout {
    return this.options.layout;
  }

  /** Observes and validates the host: canonical aliases, entry types and (in production) ownership. */
  async inspect(): Promise<LayoutFacts> {
    const facts = await observeLayout(this.fs, this.layout);
    const root = await canonicalRoot(this.fs, this.layout);
    unwrap(validateCanonicalLayout(this.layout, facts.canonical, root));
    unwrap(checkTargetsInsideRoot(this.layout, facts, root));
    unwrap(checkLayoutShape(this.layout, facts));
    if (this.isProduction()) unwrap(checkRootOwnership(this.layout, facts));
    return facts;
  }

  /**
   * Converges a legacy or half-migrated host into the managed layout (docs/operations.md#migrate).
   * Idempotent. `keep` names private temps of the caller (a staged download) that the sweep must
   * spare.
   */
  async migrate(options: { readonly keep?: readonly string[] } = {}): Promise<MigrationReport> {
    const keep = new Set(options.keep ?? []);
    this.requireRoot();
    // Read-only question first: a service platform that cannot work fails here, before any change.
    await this.services.assetsCurrent();
    const done: string[] = [];
    for (let pass = 0; pass < MIGRATION_PASSES_MAX; pass += 1) {
      const observed = await this.inspect();
      const facts = { ...observed, staleTemps: observed.staleTemps.filter((path) => !keep.has(path)) };
      const unfit =
        linkedSlot(facts, 'current') === null
          ? await unfitSeeds({ ...this.options, fs: this.fs }, facts)
          : new Set<never>();
      const plan = unwrap(planMigration(this.layout, facts, unfit));
      if (plan.actions.length === 0) {
        const assets = await this.services.convergeAssets();
        if (this.isProduction()) unwrap(checkRootOwnership(this.layout, await this.inspect()));
        return {
          changed: done.length > 0 || assets.changed,
          actions: done,
          currentSlot: plan.currentSlot,
          lastGoodSlot: plan.lastGoodSlot,
          serviceAssetsChanged: assets.changed,
          brokenSlots: this.reportBrokenSlots(facts),
        };
      }
      for (const action of plan.actions) done.push(await this.apply(action));
    }
    return raise(
      failure('E_LAYOUT', 'the layout kept changing while it was being migrated; is another tool managing it?'),
    );
  }

  /**
   * Runs one activation step that changes the layout (links, slots, temps), for the step loop
   * of either path. One step, one crash point (a sweep: one per temp). A private candidate is a
   * file of ours (a staged download, an activation snapshot): it is moved into the slot rather
   * than copied, so installing needs no room for a second copy, and the candidate path is gone
   * afterwards. Only across filesystems (a download staged beside a legacy entry) is it copied.
   */
  async applyLayoutStep(step: LayoutStep, candidate: StepCandidate): Promise<void> {
    switch (step.kind) {
      case 'initialize-layout':
        for (const action of step.actions) await this.apply(action);
        return;
      case 'remove-stale-temps':
        for (const path of step.paths) await this.apply({ kind: 'remove-stale-temp', path });
        return;
      case 'point-last-good':
        await this.apply(pointLink(this.layout, 'lastGood', slotPath(this.layout, step.slot)));
        return;
      case 'install-candidate':
        return this.install(slotPath(this.layout, step.slot), candidate);
      case 'switch-current':
        await this.apply(pointLink(this.layout, 'current', slotPath(this.layout, step.slot)));
        return;
    }
  }

  private async install(target: string, candidate: StepCandidate): Promise<void> {
    const limits = { mode: BINARY_MODE, maxBytes: this.options.binaryMaxBytes };
    const changed = (): never =>
      raise(failure('E_CANDIDATE_INVALID', `the candidate ${candidate.path} changed while it was being installed`));
    if (candidate.isPrivate) {
      try {
        await this.fs.moveFileAtomic(candidate.path, target, { ...limits, sha256: candidate.digest });
        return;
      } catch (error) {
        if (error instanceof FileSystemError && error.code === 'ECHANGED') changed();
        if (!(error instanceof FileSystemError && error.code === 'EXDEV')) throw error;
      }
    }
    if ((await this.fs.copyFileAtomic(candidate.path, target, limits)).sha256 !== candidate.digest) changed();
  }

  /** Points current at `slot` (a rollback's layout step). */
  async pointCurrentAt(slot: SlotName): Promise<void> {
    await this.apply(pointLink(this.layout, 'current', slotPath(this.layout, slot)));
  }

  async pointLastGoodAt(slot: SlotName): Promise<void> {
    await this.apply(pointLink(this.layout, 'lastGood', slotPath(this.layout, slot)));
  }

  /** Points current back at last-good's slot. Running it again changes nothing (I11). */
  async rollback(): Promise<RollbackReport> {
    this.requireRoot();
    const facts = await this.inspect();
    const { from, to } = unwrap(planRollback(facts));
    for (const path of facts.staleTemps) await this.apply({ kind: 'remove-stale-temp', path });
    if (from !== to) await this.apply(pointLink(this.layout, 'current', slotPath(this.layout, to)));
    return { changed: from !== to, from, to, brokenSlots: this.reportBrokenSlots(facts) };
  }

  /** Broken slots block no repair (current is made runnable first), so they are reported once it is done. */
  private reportBrokenSlots(facts: LayoutFacts): readonly Failure[] {
    const problems = brokenSlotProblems(facts);
    for (const problem of problems) this.logger.warn({ [LogKeys.code]: problem.code }, `${problem.message}.`);
    return problems;
  }

  private async apply(action: LayoutAction): Promise<string> {
    if (action.kind === 'point-link' && action.role !== 'entry') await this.refuseUnrunnableTarget(action);
    const description = describeLayoutAction(action);
    await runLayoutAction(this.fs, this.services, { binaryMaxBytes: this.options.binaryMaxBytes }, action);
    this.logger.info(
      { [LogKeys.action]: action.kind, [LogKeys.path]: 'link' in action ? action.link : undefined },
      `Applied: ${description}.`,
    );
    return description;
  }

  /**
   * Current and last-good only ever name a slot holding an executable regular file (I1). Plans
   * point them at such slots; a rollback to a slot that is missing or broken (a directory, a
   * FIFO, a symlink) would leave the agent nothing to run, so it is refused before the link moves.
   */
  private async refuseUnrunnableTarget(action: Extract<LayoutAction, { kind: 'point-link' }>): Promise<void> {
    const target = resolveLinkTarget(action.link, action.text);
    const fact = await observePath(this.fs, target);
    if (fact.kind === 'file' && fact.executable) return;
    const found = fact.kind === 'file' ? 'a file that is not executable' : describeKind(fact);
    raise(
      failure(
        'E_LAYOUT',
        `${action.link} is not pointed at ${target}, which holds no runnable binary (found ${found})`,
      ),
    );
  }

  private isProduction(): boolean {
    return this.layout.root === '/';
  }

  private requireRoot(): void {
    if (this.isProduction() && this.options.euid !== 0) {
      raise(failure('E_NOT_ROOT', 'changing the production layout requires root; use --root DIR for a sandbox'));
    }
  }
}
