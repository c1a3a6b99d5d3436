// events.k8s.io/v1 Events: POST (409 AlreadyExists), read back by GET and lists. The body is
// decoded as the typed API does (a field of the wrong JSON type, or an eventTime that is not a
// MicroTime, is a 400; unknown fields are dropped with a warning) and validated as
// ValidateEventCreate does for events.k8s.io/v1, with its causes: eventTime, reportingController
// (a qualified name), reportingInstance, action and reason are required and bounded, type is
// Normal or Warning, note is at most 1024 bytes, series needs count >= 2 and lastObservedTime,
// the deprecated fields must be unset, and an Event about a cluster-scoped object (regarding
// without a namespace) may only be recorded in `default` or `kube-system`. `regarding` itself
// is not required, as the real server does not require it. Stored as the server returns it:
// regarding and deprecatedSource always present, the deprecated timestamps as null.

import type { KubeRequest } from './faults.js';
import { isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { decodeMetadata, metadataCauses, qualifiedNameProblems } from './metadata.js';
import type { ObjectCollection } from './object-collection.js';
import { alreadyExists, EVENTS } from './resources.js';
import { type Cause, isDateTime } from './schema.js';
import { fail, invalid } from './status.js';
import type { KubeEvent } from './types.js';
import { microTime } from './leases.js';
import { jsonBody, type Written } from './writes.js';

const STRINGS = ['reportingController', 'reportingInstance', 'action', 'reason', 'note', 'type'];
const REFERENCE_FIELDS = ['kind', 'namespace', 'name', 'uid', 'apiVersion', 'resourceVersion', 'fieldPath'];
const LIMITS: Readonly<Record<string, number>> = { reportingInstance: 128, action: 128, reason: 128 };

function decodeError(field: string, why: string): Error {
  return fail(400, `Event in version "v1" cannot be handled as a Event: ${field}: ${why}`, 'BadRequest');
}

function reference(value: JsonValue, field: string, warnings: string[]): JsonObject {
  if (!isJsonObject(value)) throw decodeError(field, 'not an object');
  const kept: JsonObject = {};
  for (const [key, entry] of Object.entries(value)) {
    if (!REFERENCE_FIELDS.includes(key)) warnings.push(`unknown field "${field}.${key}"`);
    else if (entry === null) continue;
    else if (typeof entry !== 'string') throw decodeError(`${field}.${key}`, 'not a string');
    else kept[key] = entry;
  }
  return kept;
}

function time(value: JsonValue, field: string, micro: boolean): string {
  const parsed =
    typeof value !== 'string' ? undefined : micro ? microTime(value) : isDateTime(value) ? value : undefined;
  if (parsed === undefined) throw decodeError(field, micro ? 'not a MicroTime' : 'not a Time');
  return parsed;
}

function series(value: JsonValue, warnings: string[]): JsonObject {
  if (!isJsonObject(value)) throw decodeError('series', 'not an object');
  const kept: JsonObject = {};
  for (const [key, entry] of Object.entries(value)) {
    if (entry === null) continue;
    if (key === 'count') {
      if (typeof entry !== 'number' || !Number.isInteger(entry)) throw decodeError('series.count', 'not an int32');
      kept[key] = entry;
    } else if (key === 'lastObservedTime') kept[key] = time(entry, 'series.lastObservedTime', true);
    else warnings.push(`unknown field "series.${key}"`);
  }
  return kept;
}

/** One top-level field of the body, decoded as the typed Event; false when the Event has no such field. */
function decodeField(key: string, value: JsonValue, event: JsonObject, warnings: string[]): boolean {
  if (STRINGS.includes(key)) {
    if (typeof value !== 'string') throw decodeError(key, 'not a string');
    event[key] = value;
  } else if (key === 'eventTime') event[key] = time(value, key, true);
  else if (key === 'regarding' || key === 'related') event[key] = reference(value, key, warnings);
  else if (key === 'series') event[key] = series(value, warnings);
  else if (key === 'deprecatedFirstTimestamp' || key === 'deprecatedLastTimestamp')
    event[key] = time(value, key, false);
  else if (key === 'deprecatedCount') {
    if (typeof value !== 'number' || !Number.isInteger(value)) throw decodeError(key, 'not an int32');
    event[key] = value;
  } else if (key === 'deprecatedSource') {
    if (!isJsonObject(value)) throw decodeError(key, 'not an object');
    event[key] = Object.fromEntries(
      Object.entries(value).filter(([k, v]) => ['component', 'host'].includes(k) && v !== ''),
    );
  } else return false;
  return true;
}

function decodeEvent(body: JsonObject, warnings: string[]): JsonObject {
  const event: JsonObject = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'apiVersion' || key === 'kind' || key === 'metadata' || value === null) continue;
    if (!decodeField(key, value, event, warnings)) warnings.push(`unknown field "${key}"`);
  }
  return event;
}

const text = (event: JsonObject, key: string): string => (typeof event[key] === 'string' ? event[key] : '');
const cause = (reason: string, field: string, message: string): Cause => ({ reason, field, message });

/** The strict checks of a "new" Event (one with an eventTime), as legacyValidateEvent words them. */
function reportingCauses(event: JsonObject, namespace: string): Cause[] {
  const causes: Cause[] = [];
  const regarding = isJsonObject(event['regarding']) ? event['regarding'] : {};
  if (text(regarding, 'namespace') === '' && namespace !== 'default' && namespace !== 'kube-system')
    causes.push(
      cause('FieldValueInvalid', 'involvedObject.namespace', 'Invalid value: "": does not match event.namespace'),
    );
  const controller = text(event, 'reportingController');
  if (controller === '') causes.push(cause('FieldValueRequired', 'reportingController', 'Required value'));
  for (const problem of qualifiedNameProblems(controller))
    causes.push(
      cause('FieldValueInvalid', 'reportingController', `Invalid value: ${JSON.stringify(controller)}: ${problem}`),
    );
  for (const key of ['reportingInstance', 'action', 'reason']) {
    const value = text(event, key);
    if (value === '') causes.push(cause('FieldValueRequired', key, 'Required value'));
    if (Buffer.byteLength(value) > (LIMITS[key] ?? 0))
      causes.push(cause('FieldValueInvalid', key, `Invalid value: "": can have at most ${LIMITS[key]} characters`));
  }
  if (Buffer.byteLength(text(event, 'note')) > 1024)
    causes.push(cause('FieldValueInvalid', 'message', 'Invalid value: "": can have at most 1024 characters'));
  return causes;
}

function eventCauses(event: JsonObject, namespace: string): Cause[] {
  const causes: Cause[] = [];
  const regarding = isJsonObject(event['regarding']) ? event['regarding'] : {};
  if (event['eventTime'] === undefined) {
    // An Event without eventTime is validated as an old-style Event: only its namespace is checked.
    const about = text(regarding, 'namespace');
    if (about === '' ? namespace !== 'default' : about !== namespace)
      causes.push(
        cause('FieldValueInvalid', 'involvedObject.namespace', 'Invalid value: does not match event.namespace'),
      );
    causes.push(cause('FieldValueRequired', 'eventTime', 'Required value'));
  } else causes.push(...reportingCauses(event, namespace));
  if (isJsonObject(event['series'])) {
    const { count, lastObservedTime } = event['series'];
    if (typeof count !== 'number' || count < 2)
      causes.push(cause('FieldValueInvalid', 'series.count', 'Invalid value: "": should be at least 2'));
    if (lastObservedTime === undefined)
      causes.push(cause('FieldValueRequired', 'series.lastObservedTime', 'Required value'));
  }
  const type = text(event, 'type');
  if (type !== 'Normal' && type !== 'Warning')
    causes.push(cause('FieldValueInvalid', 'type', `Invalid value: "": has invalid value: ${type}`));
  for (const [key, field] of [
    ['deprecatedFirstTimestamp', 'firstTimestamp'],
    ['deprecatedLastTimestamp', 'lastTimestamp'],
  ] as const)
    if (event[key] !== undefined)
      causes.push(cause('FieldValueInvalid', field, 'Invalid value: "": needs to be unset'));
  if (typeof event['deprecatedCount'] === 'number' && event['deprecatedCount'] !== 0)
    causes.push(cause('FieldValueInvalid', 'count', 'Invalid value: "": needs to be unset'));
  if (isJsonObject(event['deprecatedSource']) && Object.keys(event['deprecatedSource']).length > 0)
    causes.push(cause('FieldValueInvalid', 'source', 'Invalid value: "": needs to be unset'));
  return causes;
}

export class EventStore {
  constructor(
    readonly objects: ObjectCollection<KubeEvent>,
    private readonly requireNamespace: (namespace: string) => void,
    private readonly now: () => string,
    private readonly newUid: () => string,
  ) {}

  create(namespace: string, req: KubeRequest): Written<KubeEvent> {
    this.requireNamespace(namespace);
    const body = jsonBody(req, EVENTS);
    const { metadata, unknown } = decodeMetadata(body['metadata']);
    const warnings = unknown.map((field) => `unknown field "${field}"`);
    const given = metadata['namespace'];
    if (typeof given === 'string' && given !== '' && given !== namespace)
      throw fail(
        400,
        'the namespace of the provided object does not match the namespace sent on the request',
        'BadRequest',
      );
    const fields = decodeEvent(body, warnings);
    let name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
    const generateName = typeof metadata['generateName'] === 'string' ? metadata['generateName'] : '';
    if (name === '' && generateName !== '') name = generateName + Math.random().toString(36).slice(2, 7);
    const causes = [
      ...(name === ''
        ? [cause('FieldValueRequired', 'metadata.name', 'Required value: name or generateName is required')]
        : []),
      ...metadataCauses({ ...metadata, name }),
      ...eventCauses(fields, namespace),
    ];
    if (causes.length > 0) throw invalid(EVENTS, name === '' ? undefined : name, causes);
    if (this.objects.get(`${namespace}/${name}`) !== undefined) throw alreadyExists(EVENTS, name);
    const event: KubeEvent = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name,
        ...(generateName === '' ? {} : { generateName }),
        namespace,
        uid: this.newUid(),
        resourceVersion: '',
        creationTimestamp: this.now(),
        ...(isJsonObject(metadata['labels']) ? { labels: metadata['labels'] as Record<string, string> } : {}),
        ...(isJsonObject(metadata['annotations'])
          ? { annotations: metadata['annotations'] as Record<string, string> }
          : {}),
      },
      regarding: {},
      deprecatedSource: {},
      deprecatedFirstTimestamp: null,
      deprecatedLastTimestamp: null,
      ...fields,
    };
    return { code: 201, object: this.objects.commit('ADDED', event), warnings };
  }
}
