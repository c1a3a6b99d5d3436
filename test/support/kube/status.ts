// Kubernetes `Status` error bodies (meta/v1). Clients read `code` and `reason` from these, so every
// error the fake answers is one of them, shaped as kube-apiserver shapes its own.

import type { JsonObject } from './json.js';
import type { Cause } from './schema.js';

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  /** The resource (plural) for most object errors, the kind for schema errors, as kube-apiserver fills it in. */
  readonly kind?: string;
  readonly causes?: readonly JsonObject[];
  readonly retryAfterSeconds?: number;
}

export interface KubeStatus extends JsonObject {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: JsonObject;
  status: 'Failure';
  message: string;
  reason: string;
  code: number;
}

/** The `reason` kube-apiserver pairs with each HTTP status (k8s.io/apimachinery StatusReason). */
const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export function reasonFor(code: number): string {
  return REASONS[code] ?? (code >= 500 ? 'InternalError' : 'Unknown');
}

export function failure(code: number, message: string, reason = reasonFor(code), details?: StatusDetails): KubeStatus {
  const body: KubeStatus = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details !== undefined) {
    const d: JsonObject = {};
    if (details.name !== undefined) d['name'] = details.name;
    if (details.group !== undefined) d['group'] = details.group;
    if (details.kind !== undefined) d['kind'] = details.kind;
    if (details.causes !== undefined) d['causes'] = details.causes.map((cause) => ({ ...cause }));
    if (details.retryAfterSeconds !== undefined) d['retryAfterSeconds'] = details.retryAfterSeconds;
    body['details'] = d;
  }
  return body;
}

/** An error a route throws; the dispatcher turns it into the HTTP answer. */
export class StatusError extends Error {
  constructor(readonly status: KubeStatus) {
    super(status.message);
    this.name = 'StatusError';
  }
}

export const fail = (code: number, message: string, reason?: string, details?: StatusDetails): StatusError =>
  new StatusError(failure(code, message, reason, details));

/** The resource naming a 422 needs (resources.ts has the full descriptor). */
export interface InvalidSubject {
  readonly group: string;
  readonly kind: string;
  readonly plural: string;
  /** The group a schema 422 names when it differs from the API group (Events validate as the core kind). */
  readonly validationGroup?: string;
}

/**
 * The 422 kube-apiserver answers for an object that fails validation: one cause per problem, and a
 * message listing them. Schema errors name the kind (`MachineOperation.<group>`); update-path
 * errors such as a missing resourceVersion name the resource (`machineoperations.<group>`).
 */
export function invalid(
  subject: InvalidSubject,
  name: string | undefined,
  causes: readonly Cause[],
  by: 'kind' | 'resource' = 'kind',
): StatusError {
  const listed = causes.map((cause) => `${cause.field}: ${cause.message}`);
  const group = by === 'kind' ? (subject.validationGroup ?? subject.group) : subject.group;
  const what = by === 'kind' ? subject.kind : subject.plural;
  const qualified = group === '' ? what : `${what}.${group}`;
  const message = `${qualified} "${name ?? ''}" is invalid: ${listed.length === 1 ? listed[0] : `[${listed.join(', ')}]`}`;
  return fail(422, message, 'Invalid', {
    ...(name === undefined ? {} : { name }),
    ...(group === '' ? {} : { group }),
    kind: what,
    causes,
  });
}
