// The verbs each served resource answers, over its store: routes.ts maps a request onto one of
// these and answers 405 for a verb a resource leaves out. Lists and watches are the same for
// every resource (collection.ts), so a handler only names its collection for them.

import type { CustomResourceStore } from './custom-store.js';
import type { EventStore } from './events.js';
import type { KubeRequest } from './faults.js';
import type { LeaseStore } from './leases.js';
import { keyOf, type ObjectCollection } from './object-collection.js';
import type { NamespaceStore } from './namespaces.js';
import type { NodeStore } from './nodes.js';
import { notFound, type ResourceDescriptor } from './resources.js';
import { createObject, updateObject, updateStatus, type WriteContext, type Written } from './writes.js';

export interface ResourceHandler {
  readonly resource: ResourceDescriptor;
  readonly collection: ObjectCollection;
  get(namespace: string | undefined, name: string): object;
  create?(req: KubeRequest, namespace: string | undefined): Written<object>;
  replace?(req: KubeRequest, namespace: string | undefined, name: string): Written<object>;
  patch?(req: KubeRequest, namespace: string | undefined, name: string): Written<object>;
  delete?(namespace: string | undefined, name: string): object;
  /** PUT or PATCH of the status subresource. */
  status?(req: KubeRequest, name: string): Written<object>;
}

export const handlerKey = (resource: ResourceDescriptor): string =>
  `${resource.group}/${resource.version}/${resource.plural}`;

/** Reads any stored object of `collection` by namespace and name, or answers its 404. */
function reader(collection: ObjectCollection): ResourceHandler['get'] {
  return (namespace, name) => {
    const object = collection.get(keyOf({ name, namespace }));
    if (object === undefined) throw notFound(collection.resource, name);
    return object;
  };
}

export function customResourceHandler(ctx: WriteContext, store: CustomResourceStore): ResourceHandler {
  const collection = store.objects as unknown as ObjectCollection;
  return {
    resource: store.resource,
    collection,
    get: reader(collection),
    create: (req) => createObject(store, req),
    replace: (req, _namespace, name) => updateObject(store, req, name),
    patch: (req, _namespace, name) => updateObject(store, req, name),
    delete: (_namespace, name) => store.delete(name),
    status: (req, name) => updateStatus(ctx, store, req, name),
  };
}

export function nodeHandler(store: NodeStore): ResourceHandler {
  const collection = store.objects as unknown as ObjectCollection;
  return {
    resource: collection.resource,
    collection,
    get: reader(collection),
    create: (req) => ({ code: 201, object: store.create(req), warnings: [] }),
    patch: (req, _namespace, name) => ({ code: 200, object: store.patch(name, req), warnings: [] }),
    // A built-in resource answers an immediate delete with a Success Status, not the object.
    delete: (_namespace, name) => {
      const deleted = store.delete(name);
      const details = { name, kind: 'nodes', uid: deleted.metadata.uid ?? '' };
      return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
    },
  };
}

export function namespaceHandler(store: NamespaceStore): ResourceHandler {
  const collection = store.objects as unknown as ObjectCollection;
  return {
    resource: collection.resource,
    collection,
    get: reader(collection),
    create: (req) => ({ code: 201, object: store.create(req), warnings: [] }),
  };
}

export function leaseHandler(store: LeaseStore): ResourceHandler {
  const collection = store.objects as unknown as ObjectCollection;
  return {
    resource: collection.resource,
    collection,
    get: reader(collection),
    create: (req, namespace) => store.create(namespace ?? '', req),
    replace: (req, namespace, name) => store.replace(namespace ?? '', name, req),
  };
}

export function eventHandler(store: EventStore): ResourceHandler {
  const collection = store.objects as unknown as ObjectCollection;
  return {
    resource: collection.resource,
    collection,
    get: reader(collection),
    create: (req, namespace) => store.create(namespace ?? '', req),
  };
}
