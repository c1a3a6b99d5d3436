// What the fake knows about each resource it serves, in one descriptor the storage, reads, watches
// and writes are generic over: where it lives (group, version, plural, namespaced or not), what its
// objects are called (kind, list kind), which fields a field selector may name, and for a custom
// resource the CRD model whose schema and rules validate it. Also the Status errors that name a
// resource the way kube-apiserver names it.

import type { CrdModel } from './crd.js';
import { fail, type StatusError } from './status.js';

export interface ResourceDescriptor {
  /** "" for the core group, served under /api. */
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  /** Field paths a field selector may name besides metadata.name (and metadata.namespace when namespaced). */
  readonly selectableFields: readonly string[];
  /** The schema, rules and status subresource of a custom resource; undefined for built-in kinds. */
  readonly crd?: CrdModel;
  /** The group a schema 422 names, when not the API group (Events are validated as the core kind). */
  readonly validationGroup?: string;
}

export const apiVersionOf = (resource: ResourceDescriptor): string =>
  resource.group === '' ? resource.version : `${resource.group}/${resource.version}`;

/** `<plural>.<group>` (just `<plural>` in the core group): how kube-apiserver names the resource in errors. */
export const qualifiedResource = (resource: ResourceDescriptor): string =>
  resource.group === '' ? resource.plural : `${resource.plural}.${resource.group}`;

/** The collection's path, for one namespace when the resource is namespaced. */
export function collectionPath(resource: ResourceDescriptor, namespace?: string): string {
  const base = resource.group === '' ? `/api/${resource.version}` : `/apis/${resource.group}/${resource.version}`;
  return namespace === undefined ? `${base}/${resource.plural}` : `${base}/namespaces/${namespace}/${resource.plural}`;
}

/** The Status details that name an object of `resource`: its name, group (none in core) and plural. */
export function objectDetails(
  resource: ResourceDescriptor,
  name: string,
): { name: string; group?: string; kind: string } {
  return resource.group === ''
    ? { name, kind: resource.plural }
    : { name, group: resource.group, kind: resource.plural };
}

export const notFound = (resource: ResourceDescriptor, name: string): StatusError =>
  fail(404, `${qualifiedResource(resource)} "${name}" not found`, 'NotFound', objectDetails(resource, name));

export const alreadyExists = (resource: ResourceDescriptor, name: string): StatusError =>
  fail(409, `${qualifiedResource(resource)} "${name}" already exists`, 'AlreadyExists', objectDetails(resource, name));

/** The optimistic-concurrency 409 body, as kube-apiserver words it. */
export const conflict = (resource: ResourceDescriptor, name: string): StatusError =>
  fail(
    409,
    `Operation cannot be fulfilled on ${qualifiedResource(resource)} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    'Conflict',
    objectDetails(resource, name),
  );

export const NODES: ResourceDescriptor = {
  group: '',
  version: 'v1',
  plural: 'nodes',
  kind: 'Node',
  listKind: 'NodeList',
  namespaced: false,
  selectableFields: [],
};

export const LEASES: ResourceDescriptor = {
  group: 'coordination.k8s.io',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  listKind: 'LeaseList',
  namespaced: true,
  selectableFields: [],
};

export const EVENTS: ResourceDescriptor = {
  group: 'events.k8s.io',
  version: 'v1',
  plural: 'events',
  kind: 'Event',
  listKind: 'EventList',
  namespaced: true,
  selectableFields: [],
  validationGroup: '',
};

/** The descriptor of the custom resource `crd` defines; `selectableFields` overrides the CRD's own. */
export function customResource(crd: CrdModel, selectableFields = crd.selectableFields): ResourceDescriptor {
  const { group, version, plural, kind, listKind, namespaced } = crd;
  return { group, version, plural, kind, listKind, namespaced, selectableFields, crd };
}
