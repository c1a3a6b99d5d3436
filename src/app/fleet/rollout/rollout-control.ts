import { failure, type Result } from '../../../domain/common/failure.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { RolloutState } from '../../../domain/fleet/spec/rollout-spec.js';
import type {
  ReleaseQuarantine,
  RolloutObject,
  RolloutStore,
  RolloutStoreFactory,
} from '../../../ports/fleet/rollout-store.js';
import { ANNOTATION_APPROVE_WAVE } from '../../../domain/fleet/spec/rollout-vocabulary.js';
import { raise, runUseCase } from '../../common/failure-signal.js';
import { decideApproval, decideQuarantine, quarantineOf } from './operator-decisions.js';
import { decideTransition, type RolloutAction } from './rollout-transition.js';
import { viewOf, type RolloutView } from './rollout-view.js';
import { watchRollout, type WatchOptions } from './watch-rollout.js';

/** A write refused as stale (409) is decided again on a fresh read, this many times in all. */
export const MAX_WRITE_ATTEMPTS = 5;

/** A Kubernetes object name (a DNS subdomain); a rollout's is also at most 63 characters. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface RolloutControlDependencies {
  readonly openStore: RolloutStoreFactory;
  /** Stamps each read (`RolloutView.readAtMs`) and paces `watch`. */
  readonly clock: Clock;
}

/** What a state command did: the spec fields it read and the ones it left, and whether it wrote. */
export interface RolloutChange {
  readonly name: string;
  readonly action: RolloutAction;
  readonly changed: boolean;
  readonly from: { readonly state: RolloutState | null; readonly resumeFromHalt: string };
  readonly to: { readonly state: RolloutState | null; readonly resumeFromHalt: string };
  /** `status.phase` as read before the change (the controller reports the new one). */
  readonly phase: RolloutView['phase'];
  /** Reads it took (more than one when another writer changed the rollout in between). */
  readonly attempts: number;
}

/** What `rollout approve` did: the wave it approved (or found approved). */
export interface RolloutApproval {
  readonly name: string;
  readonly wave: string;
  readonly changed: boolean;
  readonly phase: RolloutView['phase'];
  readonly attempts: number;
}

/** What `release quarantine|unquarantine` did to `spec.quarantine`. */
export interface QuarantineChange {
  readonly release: string;
  readonly changed: boolean;
  readonly from: ReleaseQuarantine;
  readonly to: ReleaseQuarantine;
  readonly attempts: number;
}

/**
 * The operator's use cases on AgentRollouts (`agent-upgrade rollout …`): read one, and set its
 * `spec.state` (and `spec.resumeFromHalt`) with the resourceVersion it was read at, so a change
 * never overwrites one it did not see. Every failure is a Result with a stable code.
 */
export class RolloutControl {
  constructor(private readonly deps: RolloutControlDependencies) {}

  status(name: string): Promise<Result<RolloutView>> {
    return this.withStore(name, async (store) => this.viewOf(await this.read(store, name)));
  }

  /** Reads the rollout until it ends (watch-rollout.ts), handing each read to `seen`. */
  watch(name: string, options: WatchOptions, seen: (view: RolloutView) => void): Promise<Result<RolloutView>> {
    return watchRollout(() => this.status(name), this.deps.clock, options, seen);
  }

  /** Every rollout, by name. */
  list(): Promise<Result<readonly RolloutView[]>> {
    return this.withStore(null, async (store) => (await store.list()).map((rollout) => this.viewOf(rollout)));
  }

  change(name: string, action: RolloutAction): Promise<Result<RolloutChange>> {
    return this.withStore(name, (store) =>
      guarded(`rollout ${name}`, async (attempt) => {
        const rollout = await this.read(store, name);
        const before = this.viewOf(rollout);
        const from = { state: before.state, resumeFromHalt: before.resumeFromHalt };
        const transition = decideTransition(action, rollout);
        const report = { name, action, from, phase: before.phase, attempts: attempt };
        if (transition.kind === 'refused') raise(transition.failure);
        if (transition.kind === 'unchanged') return { ...report, changed: false, to: from };
        const outcome = await store.patchSpec(name, rollout.resourceVersion, transition.patch);
        if (outcome.kind === 'not-found') raise(notFound(name));
        if (outcome.kind === 'conflict') return null;
        const after = this.viewOf(outcome.rollout);
        return { ...report, changed: true, to: { state: after.state, resumeFromHalt: after.resumeFromHalt } };
      }),
    );
  }

  /** Approves the current wave's manual gate (the approve-wave annotation). */
  approve(name: string): Promise<Result<RolloutApproval>> {
    return this.withStore(name, (store) =>
      guarded(`rollout ${name}`, async (attempt) => {
        const rollout = await this.read(store, name);
        const decision = decideApproval(rollout);
        const report = { name, phase: this.viewOf(rollout).phase, attempts: attempt };
        if (decision.kind === 'refused') raise(decision.failure);
        if (decision.kind === 'unchanged') {
          return { ...report, wave: rollout.annotations[ANNOTATION_APPROVE_WAVE] ?? '', changed: false };
        }
        const annotation = { [ANNOTATION_APPROVE_WAVE]: decision.value.wave };
        const outcome = await store.annotate(name, rollout.resourceVersion, annotation);
        if (outcome.kind === 'not-found') raise(notFound(name));
        return outcome.kind === 'conflict' ? null : { ...report, wave: decision.value.wave, changed: true };
      }),
    );
  }

  /** Sets or lifts an AgentRelease's quarantine. */
  quarantine(release: string, wanted: ReleaseQuarantine): Promise<Result<QuarantineChange>> {
    const missing = () => failure('E_NOT_FOUND', `there is no AgentRelease named ${release}`);
    return this.withStore(release, (store) =>
      guarded(`release ${release}`, async (attempt) => {
        const read = (await store.getRelease(release)) ?? raise(missing());
        const from = quarantineOf(read);
        const decision = decideQuarantine(read, wanted);
        if (decision.kind === 'refused') raise(decision.failure);
        if (decision.kind === 'unchanged') return { release, changed: false, from, to: from, attempts: attempt };
        const outcome = await store.quarantineRelease(release, read.resourceVersion, decision.value);
        if (outcome.kind === 'not-found') raise(missing());
        if (outcome.kind === 'conflict') return null;
        return { release, changed: true, from, to: quarantineOf(outcome.release), attempts: attempt };
      }),
    );
  }

  /** Opens the store for one command (a valid name first) and closes it when the command is done. */
  private withStore<T>(name: string | null, body: (store: RolloutStore) => Promise<T>): Promise<Result<T>> {
    return runUseCase(async () => {
      if (name !== null && !OBJECT_NAME.test(name)) {
        raise(
          failure(
            'E_USAGE',
            `${JSON.stringify(name.slice(0, 80))} is not a Kubernetes object name (lower-case DNS subdomain)`,
          ),
        );
      }
      const store = await this.deps.openStore();
      try {
        return await body(store);
      } finally {
        store.close();
      }
    });
  }

  private viewOf(rollout: RolloutObject): RolloutView {
    return viewOf(rollout, this.deps.clock.nowMs());
  }

  private async read(store: RolloutStore, name: string): Promise<RolloutObject> {
    return (await store.get(name)) ?? raise(notFound(name));
  }
}

/**
 * Runs one read-decide-write attempt until it is not refused as stale (`null`: 409 Conflict),
 * [MAX_WRITE_ATTEMPTS] times at most; then nothing was changed, and the operator tries again.
 */
async function guarded<T>(what: string, attempt: (number: number) => Promise<T | null>): Promise<T> {
  for (let number = 1; number <= MAX_WRITE_ATTEMPTS; number += 1) {
    const done = await attempt(number);
    if (done !== null) return done;
  }
  return raise(
    failure(
      'E_CLUSTER',
      `${what} changed under every one of ${MAX_WRITE_ATTEMPTS} attempts (409 Conflict); nothing was changed, try again`,
    ),
  );
}

function notFound(name: string) {
  return failure('E_NOT_FOUND', `there is no AgentRollout named ${name}`);
}
