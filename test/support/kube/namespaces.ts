// Namespaces, as far as Leases and Events need them: a namespaced write into a namespace that
// does not exist is a 404 naming it, as on a real server. The four a real server starts with
// exist from the start; more come from the fake's `namespaces` option or a POST (as
// `kubectl create namespace` makes one). Deleting one is not modelled (no namespace controller).

import type { KubeRequest } from './faults.js';
import { decodeMetadata, metadataCauses } from './metadata.js';
import type { ObjectCollection } from './object-collection.js';
import { alreadyExists, type ResourceDescriptor } from './resources.js';
import { fail, invalid } from './status.js';
import type { StoredObject } from './types.js';
import { jsonBody } from './writes.js';

export const NAMESPACES: ResourceDescriptor = {
  group: '',
  version: 'v1',
  plural: 'namespaces',
  kind: 'Namespace',
  listKind: 'NamespaceList',
  namespaced: false,
  selectableFields: ['status.phase'],
};

export const INITIAL_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

export interface Namespace extends StoredObject {
  spec: { finalizers: string[] };
  status: { phase: 'Active' };
}

export class NamespaceStore {
  constructor(
    readonly objects: ObjectCollection<Namespace>,
    private readonly now: () => string,
    private readonly newUid: () => string,
  ) {}

  has(name: string): boolean {
    return this.objects.get(name) !== undefined;
  }

  /** Throws the 404 a namespaced write into a missing namespace gets. */
  require(name: string): void {
    if (!this.has(name)) throw fail(404, `namespaces "${name}" not found`, 'NotFound', { name, kind: 'namespaces' });
  }

  add(name: string, labels: Readonly<Record<string, string>> = {}): Namespace {
    if (this.has(name)) throw alreadyExists(NAMESPACES, name);
    const namespace: Namespace = {
      apiVersion: 'v1',
      kind: 'Namespace',
      // The server labels every namespace with its own name.
      metadata: {
        name,
        uid: this.newUid(),
        resourceVersion: '',
        creationTimestamp: this.now(),
        labels: { ...labels, 'kubernetes.io/metadata.name': name },
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    };
    return this.objects.commit('ADDED', namespace);
  }

  create(req: KubeRequest): Namespace {
    const { metadata } = decodeMetadata(jsonBody(req, NAMESPACES)['metadata']);
    const name = typeof metadata['name'] === 'string' ? metadata['name'] : '';
    const causes =
      name === ''
        ? [
            {
              reason: 'FieldValueRequired',
              message: 'Required value: name or generateName is required',
              field: 'metadata.name',
            },
          ]
        : metadataCauses(metadata);
    if (name !== '' && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name))
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 label`,
        field: 'metadata.name',
      });
    if (causes.length > 0) throw invalid(NAMESPACES, name === '' ? undefined : name, causes);
    const labels = metadata['labels'];
    return this.add(name, typeof labels === 'object' && labels !== null ? (labels as Record<string, string>) : {});
  }
}
