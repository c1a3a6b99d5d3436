/**
 * The names the fleet rollout shares with the cluster: the API group of its resources, the labels
 * it puts on the MachineOperations it creates, and the Node labels and annotations it reads. One
 * place, so the planner, the manifests and the docs cannot drift apart.
 */

export const ROLLOUT_GROUP = 'agent-upgrade.dev';
export const ROLLOUT_VERSION = 'v1alpha1';
export const ROLLOUT_API_VERSION = `${ROLLOUT_GROUP}/${ROLLOUT_VERSION}`;
export const ROLLOUT_KIND = 'AgentRollout';
export const RELEASE_KIND = 'AgentRelease';

export const OPERATION_API_VERSION = 'unbounded-cloud.io/v1alpha3';
export const OPERATION_KIND = 'MachineOperation';
export const AGENT_UPGRADE = 'AgentUpgrade';

/** Labels on every child operation: which rollout, which wave, which machine, and why. */
export const LABEL_ROLLOUT = `${ROLLOUT_GROUP}/rollout`;
export const LABEL_WAVE = `${ROLLOUT_GROUP}/wave`;
export const LABEL_MACHINE = `${ROLLOUT_GROUP}/machine`;
export const LABEL_PURPOSE = `${ROLLOUT_GROUP}/purpose`;

/** The wave label of rollback children: they belong to the rollback, not to a wave. */
export const ROLLBACK_WAVE = 'rollback';

export type ChildPurpose = 'upgrade' | 'rollback';

/** A Node labelled with this (value `true`) is never upgraded by a rollout. */
export const LABEL_OPT_OUT = `${ROLLOUT_GROUP}/opt-out`;
/** The agent version the daemon runs, written by the daemon on its own Node. */
export const ANNOTATION_AGENT_VERSION = `${ROLLOUT_GROUP}/agent-version`;
/** Approves a wave with `gate: Manual`: the value names the wave that may start. */
export const ANNOTATION_APPROVE_WAVE = `${ROLLOUT_GROUP}/approve-wave`;

export const LABEL_ARCH = 'kubernetes.io/arch';
export const LABEL_ZONE = 'topology.kubernetes.io/zone';

/** Canaries are spread over the values of these labels. */
export const DIVERSITY_LABELS: readonly string[] = [LABEL_ARCH, LABEL_ZONE];

/** Failures are counted per value of these labels, so a bad architecture or zone stands out. */
export const FAILURE_LABELS: readonly string[] = [
  LABEL_ARCH,
  LABEL_ZONE,
  'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type',
];

/**
 * At most this many creates are announced (pendingCreates) at a time, whatever maxInFlight
 * allows: it bounds the status size and the write burst one reconcile can cause.
 */
export const MAX_PENDING_CREATES = 100;
/** Bounds of the evidence kept in status. */
export const FAILURE_SAMPLE_SIZE = 20;
export const MAX_FAILURE_REASONS = 16;
export const MAX_FAILURE_LABELS = 20;
export const MESSAGE_MAX_LENGTH = 200;
export const PREVIEW_CANARIES = 20;
/**
 * Lost machines named in the status, in all waves: 15 bytes each, so the status stays under 64 KiB
 * at its largest. The ones past it are still found, from the waves' digests or orders.
 */
export const MAX_LOST_LISTED = 2000;
