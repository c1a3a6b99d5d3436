// The fake's storage: MachineOperations and Nodes under one global, monotonically increasing
// resourceVersion (as etcd's revision is global across every resource), plus the event log that
// watches replay from. Everything handed out is a deep copy, so neither tests nor routes can alter
// stored state or history behind the log's back.

import { randomUUID } from 'node:crypto';
import { deepEqual, type JsonObject } from './json.js';
import { fail } from './status.js';
import {
  API_VERSION,
  GROUP,
  KIND,
  type MachineOperation,
  type MachineOperationInput,
  type Node,
  PLURAL,
  QUALIFIED_RESOURCE,
} from './types.js';

export interface StoredEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly rv: number;
  readonly object: MachineOperation;
  /** For MODIFIED, the object before the change: a watch with a selector needs both to tell leaving from joining. */
  readonly previous?: MachineOperation;
}

type Listener = (event: StoredEvent) => void;

/** RFC 3339 at second precision, as kube-apiserver renders metav1.Time. */
const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

const details = (name: string) => ({ name, group: GROUP, kind: PLURAL });

/** The optimistic-concurrency 409 body, as kube-apiserver words it. */
export const conflict = (name: string) =>
  fail(
    409,
    `Operation cannot be fulfilled on ${QUALIFIED_RESOURCE} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
    'Conflict',
    details(name),
  );

export class KubeStore {
  // Starts above 0 so a list never reports "0", which a watch would read as "any version"; and
  // everything before the fake started counts as compacted, as the history before a real watch
  // cache was filled is gone: a watch from resourceVersion 1 is told 410.
  private rv = 2;
  private compactedRv = 1;
  private readonly ops = new Map<string, MachineOperation>();
  private readonly nodes = new Map<string, Node>();
  private readonly log: StoredEvent[] = [];
  private readonly listeners = new Set<Listener>();
  private readonly writes = new Map<string, JsonObject[]>();

  currentRv(): number {
    return this.rv;
  }

  /** A watch from `rv` cannot be served once `rv` is at or below the compaction point. */
  isExpired(rv: number): boolean {
    return rv <= this.compactedRv;
  }

  /**
   * Forgets every event up to now. The counter then moves one step (an unrelated write elsewhere in
   * etcd, as happens constantly in a real cluster) so a client that relists gets a version it can
   * watch from; otherwise the relist's version would itself be "too old" and the client would loop.
   */
  compact(): void {
    this.compactedRv = this.rv;
    this.log.length = 0;
    this.rv += 1;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Events strictly after `rv`, oldest first. */
  eventsAfter(rv: number): StoredEvent[] {
    return this.log.filter((e) => e.rv > rv).map((e) => structuredClone(e));
  }

  get(name: string): MachineOperation | undefined {
    const op = this.ops.get(name);
    return op === undefined ? undefined : structuredClone(op);
  }

  require(name: string): MachineOperation {
    const op = this.get(name);
    if (op === undefined) throw fail(404, `${QUALIFIED_RESOURCE} "${name}" not found`, 'NotFound', details(name));
    return op;
  }

  /** Sorted by name, as etcd returns keys. */
  list(): MachineOperation[] {
    return [...this.ops.keys()].sort().map((name) => this.require(name));
  }

  /** `keepStatus`: a real server drops `status` on create when the status subresource is on. */
  create(input: MachineOperationInput, keepStatus: boolean): MachineOperation {
    const { name } = input.metadata;
    if (this.ops.has(name))
      throw fail(409, `${QUALIFIED_RESOURCE} "${name}" already exists`, 'AlreadyExists', details(name));
    const op: MachineOperation = {
      apiVersion: API_VERSION,
      kind: KIND,
      metadata: {
        ...structuredClone(input.metadata),
        uid: randomUUID(),
        resourceVersion: '',
        generation: 1,
        creationTimestamp: now(),
      },
    };
    if (input.spec !== undefined) op.spec = structuredClone(input.spec);
    if (keepStatus && input.status !== undefined) op.status = structuredClone(input.status);
    return this.commit('ADDED', op);
  }

  /**
   * Deletes as a DELETE does: at once without finalizers; otherwise only marks the object
   * (deletionTimestamp, a generation bump) and leaves it until an update removes the last one.
   */
  delete(name: string): MachineOperation {
    const op = this.require(name);
    if ((op.metadata.finalizers ?? []).length === 0) {
      this.ops.delete(name);
      return this.commit('DELETED', op);
    }
    if (op.metadata.deletionTimestamp !== undefined) return op;
    const marked = structuredClone(op);
    marked.metadata.deletionTimestamp = now();
    marked.metadata.deletionGracePeriodSeconds = 0;
    marked.metadata.generation = (op.metadata.generation ?? 1) + 1;
    return this.commit('MODIFIED', marked, op);
  }

  /**
   * Stores `next` (labels, annotations, finalizers, spec) over `name` when `precondition` (a
   * resourceVersion, if given) still holds. A spec change bumps `generation`; a change to nothing
   * is not persisted; removing the last finalizer of an object being deleted deletes it (the
   * answer is the object as updated, the DELETED event carries it as last stored).
   */
  update(name: string, next: MachineOperation, precondition: string | undefined): MachineOperation {
    const op = this.require(name);
    if (precondition !== undefined && precondition !== op.metadata.resourceVersion) throw conflict(name);
    const candidate = structuredClone(next);
    candidate.metadata = { ...op.metadata };
    const { labels, annotations, finalizers } = structuredClone(next.metadata);
    delete candidate.metadata.labels;
    delete candidate.metadata.annotations;
    delete candidate.metadata.finalizers;
    Object.assign(candidate.metadata, {
      ...(labels === undefined ? {} : { labels }),
      ...(annotations === undefined ? {} : { annotations }),
      ...(finalizers === undefined ? {} : { finalizers }),
    });
    candidate.status = op.status;
    if (candidate.status === undefined) delete candidate.status;
    if (deepEqual(candidate as unknown as JsonObject, op as unknown as JsonObject)) return op;
    if (!deepEqual(candidate.spec ?? {}, op.spec ?? {}))
      candidate.metadata.generation = (op.metadata.generation ?? 1) + 1;
    if (op.metadata.deletionTimestamp !== undefined && (candidate.metadata.finalizers ?? []).length === 0) {
      this.ops.delete(name);
      this.commit('DELETED', op);
      return candidate;
    }
    return this.commit('MODIFIED', candidate, op);
  }

  /**
   * Replaces the status of `name` (undefined removes it). `precondition` is the resourceVersion the
   * writer based its change on; a mismatch is the optimistic-concurrency 409. A write that changes
   * nothing is not persisted (no new resourceVersion, no event), as kube-apiserver skips it too.
   */
  writeStatus(name: string, status: JsonObject | undefined, precondition: string | undefined): MachineOperation {
    const op = this.require(name);
    if (precondition !== undefined && precondition !== op.metadata.resourceVersion) throw conflict(name);
    const written = structuredClone(status ?? {});
    const history = this.writes.get(name) ?? [];
    history.push(written);
    this.writes.set(name, history);
    if (deepEqual(op.status ?? {}, written)) return op;
    const next = structuredClone(op);
    if (status === undefined) delete next.status;
    else next.status = structuredClone(status);
    return this.commit('MODIFIED', next, op);
  }

  statusWrites(name: string): JsonObject[] {
    return structuredClone(this.writes.get(name) ?? []);
  }

  setNode(name: string, labels: Record<string, string>): Node {
    const previous = this.nodes.get(name);
    this.rv += 1;
    const node: Node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name,
        uid: previous?.metadata.uid ?? randomUUID(),
        resourceVersion: String(this.rv),
        creationTimestamp: previous?.metadata.creationTimestamp ?? now(),
        labels: { ...labels },
      },
    };
    this.nodes.set(name, node);
    return structuredClone(node);
  }

  /** A merge patch of the Node's annotations (a null value removes one), as a kubelet identity may send. */
  annotateNode(name: string, annotations: Readonly<Record<string, string | null>>): Node | undefined {
    const node = this.nodes.get(name);
    if (node === undefined) return undefined;
    const merged: Record<string, string> = { ...(node.metadata.annotations ?? {}) };
    for (const [key, value] of Object.entries(annotations)) {
      if (value === null) delete merged[key];
      else merged[key] = value;
    }
    this.rv += 1;
    node.metadata = { ...node.metadata, annotations: merged, resourceVersion: String(this.rv) };
    return structuredClone(node);
  }

  getNode(name: string): Node | undefined {
    const node = this.nodes.get(name);
    return node === undefined ? undefined : structuredClone(node);
  }

  listNodes(): Node[] {
    return [...this.nodes.keys()].sort().flatMap((n) => {
      const node = this.getNode(n);
      return node === undefined ? [] : [node];
    });
  }

  /** Every persisted change: next resourceVersion, stored copy, log entry, live listeners. */
  private commit(type: StoredEvent['type'], op: MachineOperation, previous?: MachineOperation): MachineOperation {
    this.rv += 1;
    op.metadata.resourceVersion = String(this.rv);
    if (type !== 'DELETED') this.ops.set(op.metadata.name, structuredClone(op));
    const event: StoredEvent = {
      type,
      rv: this.rv,
      object: structuredClone(op),
      ...(previous === undefined ? {} : { previous: structuredClone(previous) }),
    };
    this.log.push(event);
    for (const listener of [...this.listeners]) listener(structuredClone(event));
    return structuredClone(op);
  }
}
