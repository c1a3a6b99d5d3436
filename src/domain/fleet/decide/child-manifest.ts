import type { Machine } from '../order/fleet.js';
import type { Artifact } from '../spec/release-spec.js';
import { isLabelValue } from '../spec/spec-problems.js';
import {
  AGENT_UPGRADE,
  LABEL_ARCH,
  LABEL_MACHINE,
  LABEL_PURPOSE,
  LABEL_ROLLOUT,
  LABEL_WAVE,
  OPERATION_API_VERSION,
  OPERATION_KIND,
  ROLLBACK_WAVE,
  ROLLOUT_API_VERSION,
  ROLLOUT_KIND,
  type ChildPurpose,
} from '../spec/rollout-vocabulary.js';
import { fnv1a64 } from '../order/fnv1a64.js';

/**
 * The MachineOperation a rollout creates for one machine. Its name is derived from the rollout
 * and the machine, so creating it twice is harmless (the second create is AlreadyExists). It
 * names its machine with `machineRef`, never a selector, so only that node's daemon takes it;
 * it carries no ttlSecondsAfterFinished, so the result stays as evidence; and the rollout owns
 * it, so deleting the rollout deletes its operations.
 */
export interface MachineOperationManifest {
  readonly apiVersion: typeof OPERATION_API_VERSION;
  readonly kind: typeof OPERATION_KIND;
  readonly metadata: {
    readonly name: string;
    readonly labels: Readonly<Record<string, string>>;
    readonly ownerReferences: readonly {
      readonly apiVersion: string;
      readonly kind: string;
      readonly name: string;
      readonly uid: string;
      readonly controller: true;
    }[];
  };
  readonly spec: {
    readonly machineRef: string;
    readonly operationKind: typeof AGENT_UPGRADE;
    /** A rollback operation installs an older version: it says so, or the daemon refuses the downgrade. */
    readonly parameters: { readonly downloadURL: string; readonly sha256: string; readonly allowDowngrade?: 'true' };
  };
}

export interface RolloutIdentity {
  readonly name: string;
  readonly uid: string;
}

/** A machine's name when it is a valid label value, else a hash of it (node names may be 253 long). */
export function machineLabelValue(machineName: string): string {
  return isLabelValue(machineName) ? machineName : `h-${fnv1a64(machineName)}`;
}

export function childManifest(
  rollout: RolloutIdentity,
  machine: Machine,
  purpose: ChildPurpose,
  wave: string,
  artifacts: readonly Artifact[],
): MachineOperationManifest | null {
  const artifact = artifacts.find((entry) => entry.arch === machine.labels[LABEL_ARCH]);
  if (artifact === undefined) return null;
  return {
    apiVersion: OPERATION_API_VERSION,
    kind: OPERATION_KIND,
    metadata: {
      name: purpose === 'rollback' ? machine.rollbackChildName : machine.childName,
      labels: {
        [LABEL_ROLLOUT]: rollout.name,
        [LABEL_WAVE]: purpose === 'rollback' ? ROLLBACK_WAVE : wave,
        [LABEL_MACHINE]: machineLabelValue(machine.name),
        [LABEL_PURPOSE]: purpose,
      },
      ownerReferences: [
        { apiVersion: ROLLOUT_API_VERSION, kind: ROLLOUT_KIND, name: rollout.name, uid: rollout.uid, controller: true },
      ],
    },
    spec: {
      machineRef: machine.name,
      operationKind: AGENT_UPGRADE,
      parameters: {
        downloadURL: artifact.downloadURL,
        sha256: artifact.sha256,
        ...(purpose === 'rollback' && { allowDowngrade: 'true' as const }),
      },
    },
  };
}
