import { isSha256, type Sha256 } from '../../common/digest.js';
import { fail, ok, type Result } from '../../common/failure.js';
import { invariant } from '../../common/invariant.js';
import { isSlotName, type SlotName } from '../layout/slot.js';
import { parseEnvelope } from '../record/json-envelope.js';
import { isStoredVersionText } from '../record/upgrade-state.js';

/**
 * The direct path's durable marker (docs/protocol.md#interrupted-activation-marker): written
 * before the candidate is installed and the switch happens, deleted only once the activation
 * reached its verdict (committed or rolled back). A marker that outlives its activation means
 * the process died before the verdict — SIGKILL, an OOM kill, a power loss — and whoever takes
 * the host lock next resolves it: roll back unless the candidate is proven healthy.
 */
export const ACTIVATION_MARKER_KIND = 'AgentDirectActivation';
export const ACTIVATION_MARKER_SCHEMA_VERSION = 1;
export const MARKER_TEXT_MAX_BYTES = 4096;

export interface ActivationMarker {
  readonly kind: typeof ACTIVATION_MARKER_KIND;
  readonly schemaVersion: typeof ACTIVATION_MARKER_SCHEMA_VERSION;
  /** The slot current named before the activation: where a rollback goes. */
  readonly previous: SlotName;
  readonly candidate: SlotName;
  readonly candidateDigest: Sha256;
  /** Version text as the candidate printed it (trimmed, valid), or null. */
  readonly candidateVersion: string | null;
  /** Whether the agent service was running: a stopped agent needs no health verdict. */
  readonly serviceActive: boolean;
}

export interface NewMarkerInput {
  readonly previous: SlotName;
  readonly candidate: SlotName;
  readonly candidateDigest: Sha256;
  readonly candidateVersion: string | null;
  readonly serviceActive: boolean;
}

export function newActivationMarker(input: NewMarkerInput): ActivationMarker {
  invariant(input.previous !== input.candidate, 'a marker names two different slots');
  invariant(isSha256(input.candidateDigest), 'a marker carries a canonical digest');
  invariant(
    input.candidateVersion === null || isStoredVersionText(input.candidateVersion),
    'a marker version is valid version text',
  );
  return { kind: ACTIVATION_MARKER_KIND, schemaVersion: ACTIVATION_MARKER_SCHEMA_VERSION, ...input };
}

export function serializeMarker(marker: ActivationMarker): string {
  const canonical = {
    kind: marker.kind,
    schemaVersion: marker.schemaVersion,
    previous: marker.previous,
    candidate: marker.candidate,
    candidateDigest: marker.candidateDigest,
    candidateVersion: marker.candidateVersion,
    serviceActive: marker.serviceActive,
  };
  return `${JSON.stringify(canonical, null, 2)}\n`;
}

const MARKER_KEYS = [
  'kind',
  'schemaVersion',
  'previous',
  'candidate',
  'candidateDigest',
  'candidateVersion',
  'serviceActive',
] as const;

/** Strict parse; every problem is `E_RECORD` (the marker is a record of the direct path). */
export function parseMarker(text: string): Result<ActivationMarker> {
  const envelope = parseEnvelope(text, {
    what: 'the activation marker',
    where: 'marker',
    code: 'E_RECORD',
    kind: ACTIVATION_MARKER_KIND,
    schemaVersion: ACTIVATION_MARKER_SCHEMA_VERSION,
    maxLength: MARKER_TEXT_MAX_BYTES,
    keys: MARKER_KEYS,
  });
  if (!envelope.ok) return envelope;
  const { previous, candidate, candidateDigest, candidateVersion, serviceActive } = envelope.value;
  if (!isSlotName(previous) || !isSlotName(candidate) || previous === candidate)
    return fail('E_RECORD', 'the activation marker must name two different slots');
  if (!isSha256(candidateDigest)) return fail('E_RECORD', 'the activation marker digest must be a SHA-256 digest');
  if (candidateVersion !== null && !isStoredVersionText(candidateVersion))
    return fail('E_RECORD', 'the activation marker version must be a version or null');
  if (typeof serviceActive !== 'boolean')
    return fail('E_RECORD', 'the activation marker serviceActive must be a boolean');
  return ok(newActivationMarker({ previous, candidate, candidateDigest, candidateVersion, serviceActive }));
}

/**
 * What is known about the candidate's health when an interrupted activation is resolved:
 * `unproven` when it cannot be judged (the agent is not running it), which still rolls back but
 * does not quarantine a binary that never had its chance.
 */
export type MarkerHealth = 'healthy' | 'unhealthy' | 'unproven' | 'unknown';

export interface MarkerObservation {
  /** The slot current names now, or null when it names none. */
  readonly current: SlotName | null;
  /** The digest of the file in the candidate slot now. */
  readonly candidateSlotDigest: Sha256 | null;
  readonly health: MarkerHealth;
  /**
   * The candidate's watch window (docs/protocol.md#watch-window): `none` when none is due,
   * `open` when some of it is still to watch (or it is due and never opened), `over` when all of
   * it was watched, `crashed` when the service manager restarted the agent inside it.
   */
  readonly window: 'none' | 'open' | 'over' | 'crashed';
}

export type MarkerDecision =
  /** The switch never happened, or was already undone: forget the marker. */
  | { readonly kind: 'discard' }
  /** Current runs the candidate and nobody has judged it yet: measure its health first. */
  | { readonly kind: 'measure-health'; readonly slot: SlotName }
  /** Proven by its gate, the candidate is still on trial: watch the rest of its window. */
  | { readonly kind: 'resume-watch'; readonly slot: SlotName }
  /** The candidate is proven (or needs no proof: the agent was stopped): record it, forget the marker. */
  | { readonly kind: 'commit'; readonly slot: SlotName }
  /** Back to the previous slot; quarantine the candidate when it was proven bad. */
  | { readonly kind: 'roll-back'; readonly to: SlotName; readonly quarantine: boolean };

/**
 * The decision for a marker found by someone other than the activation that wrote it (that
 * process is gone: it held the host lock until the verdict). Current naming anything but the
 * candidate — or a candidate slot that no longer holds the candidate — means nothing of the
 * activation is live. Otherwise the candidate runs unjudged: roll back unless proven healthy —
 * by its gate and, when one is due, by the rest of its watch window.
 */
export function decideInterruptedActivation(marker: ActivationMarker, observed: MarkerObservation): MarkerDecision {
  if (observed.current !== marker.candidate || observed.candidateSlotDigest !== marker.candidateDigest)
    return { kind: 'discard' };
  if (!marker.serviceActive) return { kind: 'commit', slot: marker.candidate };
  if (observed.window === 'crashed') return { kind: 'roll-back', to: marker.previous, quarantine: true };
  switch (observed.health) {
    case 'unknown':
      return { kind: 'measure-health', slot: marker.candidate };
    case 'healthy':
      return observed.window === 'open'
        ? { kind: 'resume-watch', slot: marker.candidate }
        : { kind: 'commit', slot: marker.candidate };
    case 'unhealthy':
      return { kind: 'roll-back', to: marker.previous, quarantine: true };
    case 'unproven':
      return { kind: 'roll-back', to: marker.previous, quarantine: false };
  }
}
