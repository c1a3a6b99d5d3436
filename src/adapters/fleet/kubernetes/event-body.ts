import type { RolloutEvent } from '../../../domain/fleet/decide/actions.js';

export const REPORTING_CONTROLLER = 'agent-upgrade.dev/controller';
/** The API server refuses a longer note: the limit is in UTF-8 bytes, not characters. */
const NOTE_MAX_BYTES = 1024;
/** An object name is a DNS subdomain: at most 253 characters. */
const NAME_MAX_CHARS = 253;

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
    metadata: { name: eventName(regarding.name, `.${atMs.toString(16)}${sequence.toString(16).padStart(4, '0')}`) },
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

/**
 * `<object><suffix>`, the object's name cut so the whole stays a valid name (client-go does not
 * cut, and an object named near the 253-character limit gets no Event there). A cut that ends on
 * `.` or `-` is cut further: a DNS label ends with a letter or digit.
 */
function eventName(objectName: string, suffix: string): string {
  if (objectName.length + suffix.length <= NAME_MAX_CHARS) return `${objectName}${suffix}`;
  return `${objectName.slice(0, NAME_MAX_CHARS - suffix.length).replace(/[.-]+$/, '')}${suffix}`;
}
