import { failure, type Result } from '../../../domain/common/failure.js';
import type { RolloutState } from '../../../domain/fleet/spec/rollout-spec.js';
import type { RolloutObject, RolloutStore, RolloutStoreFactory } from '../../../ports/fleet/rollout-store.js';
import { raise, runUseCase } from '../../common/failure-signal.js';
import { decideTransition, type RolloutAction } from './rollout-transition.js';
import { viewOf, type RolloutView } from './rollout-view.js';

/** A write refused as stale (409) is decided again on a fresh read, this many times in all. */
export const MAX_WRITE_ATTEMPTS = 5;

/** A Kubernetes object name (a DNS subdomain); a rollout's is also at most 63 characters. */
const OBJECT_NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface RolloutControlDependencies {
  readonly openStore: RolloutStoreFactory;
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

/**
 * The operator's use cases on AgentRollouts (`agent-upgrade rollout …`): read one, and set its
 * `spec.state` (and `spec.resumeFromHalt`) with the resourceVersion it was read at, so a change
 * never overwrites one it did not see. Every failure is a Result with a stable code.
 */
export class RolloutControl {
  constructor(private readonly deps: RolloutControlDependencies) {}

  status(name: string): Promise<Result<RolloutView>> {
    return this.withStore(name, async (store) => viewOf(await this.read(store, name)));
  }

  change(name: string, action: RolloutAction): Promise<Result<RolloutChange>> {
    return this.withStore(name, async (store) => {
      for (let attempt = 1; attempt <= MAX_WRITE_ATTEMPTS; attempt += 1) {
        const rollout = await this.read(store, name);
        const before = viewOf(rollout);
        const from = { state: before.state, resumeFromHalt: before.resumeFromHalt };
        const transition = decideTransition(action, rollout);
        const report = { name, action, from, phase: before.phase, attempts: attempt };
        if (transition.kind === 'refused') raise(transition.failure);
        if (transition.kind === 'unchanged') return { ...report, changed: false, to: from };
        const outcome = await store.patchSpec(name, rollout.resourceVersion, transition.patch);
        if (outcome.kind === 'not-found') raise(notFound(name));
        if (outcome.kind === 'conflict') continue;
        const after = viewOf(outcome.rollout);
        return { ...report, changed: true, to: { state: after.state, resumeFromHalt: after.resumeFromHalt } };
      }
      return raise(
        failure(
          'E_CLUSTER',
          `rollout ${name} changed under every one of ${MAX_WRITE_ATTEMPTS} attempts (409 Conflict); nothing was changed, try again`,
        ),
      );
    });
  }

  /** Opens the store for one command (a valid name first) and closes it when the command is done. */
  private withStore<T>(name: string, body: (store: RolloutStore) => Promise<T>): Promise<Result<T>> {
    return runUseCase(async () => {
      if (!OBJECT_NAME.test(name)) {
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

  private async read(store: RolloutStore, name: string): Promise<RolloutObject> {
    return (await store.get(name)) ?? raise(notFound(name));
  }
}

function notFound(name: string) {
  return failure('E_NOT_FOUND', `there is no AgentRollout named ${name}`);
}
