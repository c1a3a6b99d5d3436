// A custom resource's storage semantics, as kube-apiserver applies them to a CRD with a status
// subresource: create (AlreadyExists), update of metadata and spec (generation on spec changes,
// no-op writes not persisted, finalizers), status writes (no generation), and deletion with
// finalizers. Values come in already validated (writes.ts); reads hand out the stored objects,
// which are frozen, so callers copy before they change anything.

import { deepEqual, type JsonObject } from './json.js';
import type { ObjectCollection } from './object-collection.js';
import { alreadyExists, apiVersionOf, conflict, notFound, type ResourceDescriptor } from './resources.js';
import type { CustomObject, CustomObjectInput } from './types.js';

const asJson = (object: CustomObject): JsonObject => object as unknown as JsonObject;

export class CustomResourceStore {
  private readonly writes = new Map<string, JsonObject[]>();

  constructor(
    readonly objects: ObjectCollection<CustomObject>,
    /** Now, as RFC 3339 (the store's clock). */
    private readonly now: () => string,
    private readonly recordStatusWrites: boolean,
    private readonly newUid: () => string,
  ) {}

  get resource(): ResourceDescriptor {
    return this.objects.resource;
  }

  get(name: string): CustomObject | undefined {
    return this.objects.get(name);
  }

  require(name: string): CustomObject {
    const object = this.objects.get(name);
    if (object === undefined) throw notFound(this.resource, name);
    return object;
  }

  /** Every object, in name order. */
  list(): CustomObject[] {
    return this.objects.page('', undefined, undefined, () => true).items;
  }

  /** `keepStatus`: a real server drops `status` on create when the status subresource is on. */
  create(input: CustomObjectInput, keepStatus: boolean): CustomObject {
    const { name } = input.metadata;
    if (this.objects.get(name) !== undefined) throw alreadyExists(this.resource, name);
    const object: CustomObject = {
      apiVersion: apiVersionOf(this.resource),
      kind: this.resource.kind,
      metadata: {
        ...structuredClone(input.metadata),
        uid: this.newUid(),
        resourceVersion: '',
        generation: 1,
        creationTimestamp: this.now(),
      },
    };
    if (input.spec !== undefined) object.spec = structuredClone(input.spec);
    if (keepStatus && input.status !== undefined) object.status = structuredClone(input.status);
    return this.objects.commit('ADDED', object);
  }

  /**
   * Deletes as a DELETE does: at once without finalizers; otherwise only marks the object
   * (deletionTimestamp, a generation bump) and leaves it until an update removes the last one.
   */
  delete(name: string): CustomObject {
    const stored = this.require(name);
    if ((stored.metadata.finalizers ?? []).length === 0) return this.objects.commit('DELETED', structuredClone(stored));
    if (stored.metadata.deletionTimestamp !== undefined) return stored;
    const marked = structuredClone(stored);
    marked.metadata.deletionTimestamp = this.now();
    marked.metadata.deletionGracePeriodSeconds = 0;
    marked.metadata.generation = (stored.metadata.generation ?? 1) + 1;
    return this.objects.commit('MODIFIED', marked, stored);
  }

  /**
   * Stores `next` (labels, annotations, owner references, finalizers, spec) over `name` when
   * `precondition` (a resourceVersion, if given) still holds. A spec change bumps `generation`; a
   * change to nothing is not persisted; removing the last finalizer of an object being deleted
   * deletes it (the answer is the object as updated, the DELETED event carries it as last stored).
   */
  update(name: string, next: CustomObject, precondition: string | undefined): CustomObject {
    const stored = this.require(name);
    if (precondition !== undefined && precondition !== stored.metadata.resourceVersion)
      throw conflict(this.resource, name);
    const candidate = structuredClone(next);
    const { labels, annotations, ownerReferences, finalizers } = candidate.metadata;
    candidate.metadata = structuredClone(stored.metadata);
    for (const field of ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const)
      delete candidate.metadata[field];
    Object.assign(candidate.metadata, {
      ...(labels === undefined ? {} : { labels }),
      ...(annotations === undefined ? {} : { annotations }),
      ...(ownerReferences === undefined ? {} : { ownerReferences }),
      ...(finalizers === undefined ? {} : { finalizers }),
    });
    if (stored.status === undefined) delete candidate.status;
    else candidate.status = structuredClone(stored.status);
    if (deepEqual(asJson(candidate), asJson(stored))) return stored;
    if (!deepEqual(candidate.spec ?? {}, stored.spec ?? {}))
      candidate.metadata.generation = (stored.metadata.generation ?? 1) + 1;
    if (stored.metadata.deletionTimestamp !== undefined && (candidate.metadata.finalizers ?? []).length === 0) {
      this.objects.commit('DELETED', structuredClone(stored));
      return candidate;
    }
    return this.objects.commit('MODIFIED', candidate, stored);
  }

  /**
   * Replaces the status of `name` (undefined removes it). `precondition` is the resourceVersion the
   * writer based its change on; a mismatch is the optimistic-concurrency 409. A write that changes
   * nothing is not persisted (no new resourceVersion, no event), as kube-apiserver skips it too.
   */
  writeStatus(name: string, status: JsonObject | undefined, precondition: string | undefined): CustomObject {
    const stored = this.require(name);
    if (precondition !== undefined && precondition !== stored.metadata.resourceVersion)
      throw conflict(this.resource, name);
    if (this.recordStatusWrites) {
      const history = this.writes.get(name) ?? [];
      history.push(structuredClone(status ?? {}));
      this.writes.set(name, history);
    }
    if (deepEqual(stored.status ?? {}, status ?? {})) return stored;
    const next = structuredClone(stored);
    if (status === undefined) delete next.status;
    else next.status = structuredClone(status);
    return this.objects.commit('MODIFIED', next, stored);
  }

  statusWrites(name: string): JsonObject[] {
    return structuredClone(this.writes.get(name) ?? []);
  }
}
