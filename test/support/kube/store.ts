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
}

type Listener = (event: StoredEvent) => void;

/** RFC 3339 at second precision, as kube-apiserver renders metav1.Time. */
const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

const details = (name: string) => ({ name, group: GROUP, kind: PLURAL });

export class KubeStore {
  // Starts above 0 so a list never reports "0", which a watch would read as "any version".
  private rv = 1;
  private compactedRv = 0;
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
    return this.log.filter((e) => e.rv > rv).map((e) => ({ ...e, object: structuredClone(e.object) }));
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

  delete(name: string): MachineOperation {
    const op = this.require(name);
    this.ops.delete(name);
    return this.commit('DELETED', op);
  }

  /**
   * Replaces the status of `name` (undefined removes it). `precondition` is the resourceVersion the
   * writer based its change on; a mismatch is the optimistic-concurrency 409. A write that changes
   * nothing is not persisted (no new resourceVersion, no event), as kube-apiserver skips it too.
   */
  writeStatus(name: string, status: JsonObject | undefined, precondition: string | undefined): MachineOperation {
    const op = this.require(name);
    if (precondition !== undefined && precondition !== op.metadata.resourceVersion) {
      throw fail(
        409,
        `Operation cannot be fulfilled on ${QUALIFIED_RESOURCE} "${name}": the object has been modified; please apply your changes to the latest version and try again`,
        'Conflict',
        details(name),
      );
    }
    const written = structuredClone(status ?? {});
    const history = this.writes.get(name) ?? [];
    history.push(written);
    this.writes.set(name, history);
    if (deepEqual(op.status ?? {}, written)) return op;
    if (status === undefined) delete op.status;
    else op.status = structuredClone(status);
    return this.commit('MODIFIED', op);
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
  private commit(type: StoredEvent['type'], op: MachineOperation): MachineOperation {
    this.rv += 1;
    op.metadata.resourceVersion = String(this.rv);
    if (type !== 'DELETED') this.ops.set(op.metadata.name, structuredClone(op));
    const event: StoredEvent = { type, rv: this.rv, object: structuredClone(op) };
    this.log.push(event);
    for (const listener of [...this.listeners]) listener({ ...event, object: structuredClone(op) });
    return structuredClone(op);
  }
}
