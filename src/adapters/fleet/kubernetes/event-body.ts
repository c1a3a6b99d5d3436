import type { RolloutEvent } from '../../../domain/fleet/decide/actions.js';

export const REPORTING_CONTROLLER = 'agent-upgrade.dev/controller';
/** The API server refuses a longer note: the limit is in UTF-8 bytes, not characters. */
const NOTE_MAX_BYTES = 1024;

/**
 * An `events.k8s.io/v1` Event about a rollout or release. The name follows client-go's
 * `<object>.<hex time>` with a per-process sequence, so two events of one instant do not collide;
 * `eventTime` is a MicroTime (RFC 3339 with microseconds), which the API server requires.
 */
export function eventBody(event: RolloutEvent, atMs: number, instance: string, sequence: number): object {
  const { regarding } = event;
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: `${regarding.name}.${atMs.toString(16)}${sequence.toString(16).padStart(4, '0')}` },
    eventTime: new Date(atMs).toISOString().replace(/Z$/, '000Z'),
    reportingController: REPORTING_CONTROLLER,
    reportingInstance: instance,
    action: event.reason,
    reason: event.reason,
    type: event.type,
    note: truncateUtf8(event.message, NOTE_MAX_BYTES),
    regarding: {
      apiVersion: 'agent-upgrade.dev/v1alpha1',
      kind: regarding.kind,
      name: regarding.name,
      uid: regarding.uid,
    },
  };
}

/** The longest prefix of `text` of at most `maxBytes` UTF-8 bytes, never splitting a character. */
function truncateUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let bytes = 0;
  let end = 0;
  for (const character of text) {
    bytes += Buffer.byteLength(character);
    if (bytes > maxBytes) break;
    end += character.length;
  }
  return text.slice(0, end);
}
