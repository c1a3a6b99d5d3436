// coordination.k8s.io/v1 Leases, as leader election uses them: GET, POST (409 AlreadyExists),
// and PUT, which needs metadata.resourceVersion on an existing Lease (422 without, 409 when
// stale), persists nothing for a write that changes nothing, and creates a missing Lease (201),
// as the Lease registry allows. The spec is decoded as the typed API does: a field of the wrong
// JSON type is a 400, a MicroTime must have six fractional digits (and is stored in UTC), unknown
// fields are dropped with a warning (so are coordinated leader election's strategy and
// preferredHolder, which the fake does not model); then leaseDurationSeconds > 0 and
// leaseTransitions >= 0.

import type { KubeRequest } from './faults.js';
import { deepEqual, isJsonObject, type JsonObject, type JsonValue } from './json.js';
import { decodeMetadata, metadataCauses } from './metadata.js';
import { keyOf, type ObjectCollection } from './object-collection.js';
import { alreadyExists, apiVersionOf, conflict, LEASES, notFound } from './resources.js';
import { isDateTime, type Cause } from './schema.js';
import { fail, invalid } from './status.js';
import type { Lease, ObjectMeta } from './types.js';
import { jsonBody, resourceVersionRequired, type Written } from './writes.js';

const MICRO_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})(Z|([+-])(\d{2}):(\d{2}))$/;
const INT32_MAX = 2 ** 31 - 1;

/** A metav1.MicroTime as Go parses it (RFC 3339, exactly six fractional digits), re-rendered in UTC; else undefined. */
export function microTime(text: string): string | undefined {
  const match = MICRO_TIME.exec(text);
  if (match === null || !isDateTime(text)) return undefined;
  const [, year, month, day, hour, minute, second, micros, , sign, offsetHours, offsetMinutes] = match;
  const offsetMs =
    sign === undefined ? 0 : (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes)) * 60_000;
  const utc =
    Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)) - offsetMs;
  return `${new Date(utc).toISOString().slice(0, 19)}.${micros ?? '000000'}Z`;
}

function decodeError(field: string, why: string): Error {
  return fail(400, `Lease in version "v1" cannot be handled as a Lease: ${field}: ${why}`, 'BadRequest');
}

function int32(value: JsonValue, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > INT32_MAX)
    throw decodeError(field, 'not an int32');
  return value;
}

/** The typed LeaseSpec of `raw`, with the warnings for the fields it does not have. */
function decodeSpec(raw: JsonValue | undefined, warnings: string[]): Lease['spec'] {
  if (raw === undefined || raw === null) return {};
  if (!isJsonObject(raw)) throw decodeError('spec', 'not an object');
  const spec: Lease['spec'] = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null) continue;
    const field = `spec.${key}`;
    if (key === 'holderIdentity') {
      if (typeof value !== 'string') throw decodeError(field, 'not a string');
      spec.holderIdentity = value;
    } else if (key === 'leaseDurationSeconds' || key === 'leaseTransitions') spec[key] = int32(value, field);
    else if (key === 'acquireTime' || key === 'renewTime') {
      const time = typeof value === 'string' ? microTime(value) : undefined;
      if (time === undefined) throw decodeError(field, 'not a MicroTime (RFC 3339 with six fractional digits)');
      spec[key] = time;
    } else warnings.push(`unknown field "${field}"`);
  }
  return spec;
}

interface DecodedLease {
  readonly metadata: JsonObject;
  readonly spec: Lease['spec'];
  readonly warnings: string[];
}

function decodeLease(req: KubeRequest, namespace: string): DecodedLease {
  const body = jsonBody(req, LEASES);
  const { metadata, unknown } = decodeMetadata(body['metadata']);
  const warnings = unknown.map((field) => `unknown field "${field}"`);
  for (const key of Object.keys(body))
    if (!['apiVersion', 'kind', 'metadata', 'spec'].includes(key)) warnings.push(`unknown field "${key}"`);
  const given = metadata['namespace'];
  if (typeof given === 'string' && given !== '' && given !== namespace)
    throw fail(
      400,
      'the namespace of the provided object does not match the namespace sent on the request',
      'BadRequest',
    );
  return { metadata, spec: decodeSpec(body['spec'], warnings), warnings };
}

function specCauses(spec: Lease['spec']): Cause[] {
  const causes: Cause[] = [];
  if (spec.leaseDurationSeconds !== undefined && spec.leaseDurationSeconds <= 0)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${spec.leaseDurationSeconds}: must be greater than 0`,
      field: 'spec.leaseDurationSeconds',
    });
  if (spec.leaseTransitions !== undefined && spec.leaseTransitions < 0)
    causes.push({
      reason: 'FieldValueInvalid',
      message: `Invalid value: ${spec.leaseTransitions}: must be greater than or equal to 0`,
      field: 'spec.leaseTransitions',
    });
  return causes;
}

/** The metadata a write may set: labels, annotations and owner references. */
function writableMetadata(metadata: JsonObject): Partial<ObjectMeta> {
  const kept: Partial<ObjectMeta> = {};
  for (const key of ['labels', 'annotations', 'ownerReferences'] as const) {
    const value = metadata[key];
    if (value !== undefined && value !== null && !(isJsonObject(value) && Object.keys(value).length === 0))
      (kept as Record<string, unknown>)[key] = structuredClone(value);
  }
  return kept;
}

export class LeaseStore {
  constructor(
    readonly objects: ObjectCollection<Lease>,
    private readonly requireNamespace: (namespace: string) => void,
    private readonly now: () => string,
    private readonly newUid: () => string,
  ) {}

  get(namespace: string, name: string): Lease | undefined {
    return this.objects.get(keyOf({ namespace, name }));
  }

  require(namespace: string, name: string): Lease {
    const lease = this.get(namespace, name);
    if (lease === undefined) throw notFound(LEASES, name);
    return lease;
  }

  /** Creates or replaces a Lease with exactly this spec, as a kubelet's renewal would (ADDED or MODIFIED). */
  set(namespace: string, name: string, spec: Lease['spec']): Lease {
    this.requireNamespace(namespace);
    const current = this.get(namespace, name);
    const lease: Lease = {
      apiVersion: apiVersionOf(LEASES),
      kind: 'Lease',
      metadata: {
        name,
        namespace,
        uid: current?.metadata.uid ?? this.newUid(),
        resourceVersion: '',
        creationTimestamp: current?.metadata.creationTimestamp ?? this.now(),
      },
      spec: { ...spec },
    };
    return current === undefined
      ? this.objects.commit('ADDED', lease)
      : this.objects.commit('MODIFIED', lease, current);
  }

  create(namespace: string, req: KubeRequest): Written<Lease> {
    this.requireNamespace(namespace);
    const decoded = decodeLease(req, namespace);
    const name = decoded.metadata['name'];
    if (typeof name !== 'string' || name === '')
      throw invalid(LEASES, undefined, [
        {
          reason: 'FieldValueRequired',
          message: 'Required value: name or generateName is required',
          field: 'metadata.name',
        },
      ]);
    return this.store(namespace, name, decoded, undefined);
  }

  replace(namespace: string, name: string, req: KubeRequest): Written<Lease> {
    const decoded = decodeLease(req, namespace);
    const bodyName = decoded.metadata['name'];
    if (typeof bodyName === 'string' && bodyName !== name)
      throw fail(
        400,
        `the name of the object (${bodyName}) does not match the name on the URL (${name})`,
        'BadRequest',
      );
    const current = this.get(namespace, name);
    if (current === undefined) {
      this.requireNamespace(namespace);
      return this.store(namespace, name, decoded, undefined);
    }
    const rv = decoded.metadata['resourceVersion'];
    if (typeof rv !== 'string' || rv === '') throw resourceVersionRequired(LEASES, name);
    if (rv !== current.metadata.resourceVersion) throw conflict(LEASES, name);
    return this.store(namespace, name, decoded, current);
  }

  private store(namespace: string, name: string, decoded: DecodedLease, current: Lease | undefined): Written<Lease> {
    const lease: Lease = {
      apiVersion: apiVersionOf(LEASES),
      kind: 'Lease',
      metadata: {
        name,
        namespace,
        uid: current?.metadata.uid ?? this.newUid(),
        resourceVersion: current?.metadata.resourceVersion ?? '',
        creationTimestamp: current?.metadata.creationTimestamp ?? this.now(),
        ...writableMetadata(decoded.metadata),
      },
      spec: decoded.spec,
    };
    const causes = [...metadataCauses(lease.metadata as unknown as JsonObject), ...specCauses(lease.spec)];
    if (causes.length > 0) throw invalid(LEASES, name, causes);
    if (current === undefined) {
      if (this.get(namespace, name) !== undefined) throw alreadyExists(LEASES, name);
      return { code: 201, object: this.objects.commit('ADDED', lease), warnings: decoded.warnings };
    }
    if (deepEqual(lease as unknown as JsonObject, current as unknown as JsonObject))
      return { code: 200, object: current, warnings: decoded.warnings };
    return { code: 200, object: this.objects.commit('MODIFIED', lease, current), warnings: decoded.warnings };
  }
}
