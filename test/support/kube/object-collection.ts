// One resource's storage: its objects, kept in key order (as etcd returns keys) and frozen once
// stored, and the log of its changes that watches replay from, with the point below which that
// history is gone (compacted, or past `historyLimit`). Everything is sized for 10,000 objects and
// many more writes: reads hand out the stored (immutable) objects without copying, a page is
// found by binary search, a replay by binary search in the log, and each object is serialized to
// JSON at most once however many watches it is sent to.

import type { ResourceDescriptor } from './resources.js';
import type { StoredObject } from './types.js';

export interface StoredEvent<T extends StoredObject = StoredObject> {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly rv: number;
  readonly object: T;
  /** For MODIFIED, the object before the change: a watch with a selector needs both to tell leaving from joining. */
  readonly previous?: T;
}

/** The global resourceVersion counter every collection draws from, as etcd's revision is global. */
export interface RevisionClock {
  current(): number;
  next(): number;
}

type Listener<T extends StoredObject> = (event: StoredEvent<T>) => void;

const serialized = new WeakMap<object, string>();

/** `object` as JSON, computed once per stored object (stored objects never change). */
export function jsonOf(object: object): string {
  let text = serialized.get(object);
  if (text === undefined) {
    text = JSON.stringify(object);
    serialized.set(object, text);
  }
  return text;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The storage key: the name, or `<namespace>/<name>` for a namespaced object (etcd's key order). */
export const keyOf = (metadata: { readonly name: string; readonly namespace?: string | undefined }): string =>
  metadata.namespace === undefined ? metadata.name : `${metadata.namespace}/${metadata.name}`;

export class ObjectCollection<T extends StoredObject = StoredObject> {
  private readonly objects = new Map<string, T>();
  /** Every key, sorted. */
  private readonly keys: string[] = [];
  private log: StoredEvent<T>[] = [];
  /** Index of the oldest event still kept in `log`. */
  private head = 0;
  private readonly listeners = new Set<Listener<T>>();

  constructor(
    readonly resource: ResourceDescriptor,
    private readonly clock: RevisionClock,
    /** How many events the log keeps; older ones are forgotten and watches from before them expire. */
    private readonly historyLimit: number,
    /** A watch from at or below this resourceVersion cannot be served. */
    private compactedRv: number,
  ) {}

  get size(): number {
    return this.objects.size;
  }

  /** The stored object (frozen: copy it before changing it). */
  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  isExpired(rv: number): boolean {
    return rv <= this.compactedRv;
  }

  /** Forgets the history through `rv`. */
  compactThrough(rv: number): void {
    this.compactedRv = Math.max(this.compactedRv, rv);
    this.log = this.log.slice(this.firstAfter(rv));
    this.head = 0;
  }

  subscribe(listener: Listener<T>): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** Events strictly after `rv`, oldest first. */
  eventsAfter(rv: number): StoredEvent<T>[] {
    return this.log.slice(this.firstAfter(rv));
  }

  /**
   * Up to `limit` objects (all when undefined) that `accept`s, in key order, after the key `after`
   * (exclusive) among the keys starting with `prefix`; `more` tells whether further ones match.
   * `remaining` counts every key after the last one returned, as remainingItemCount does.
   */
  page(
    prefix: string,
    after: string | undefined,
    limit: number | undefined,
    accept: (object: T) => boolean,
  ): { items: T[]; more: boolean; remaining: number } {
    const items: T[] = [];
    let index = after === undefined || after < prefix ? this.lowerBound(prefix) : this.upperBound(after);
    let more = false;
    for (; index < this.keys.length; index += 1) {
      const key = this.keys[index] ?? '';
      if (!key.startsWith(prefix)) break;
      const object = this.objects.get(key);
      if (object === undefined || !accept(object)) continue;
      if (limit !== undefined && items.length === limit) {
        more = true;
        break;
      }
      items.push(object);
    }
    const last = items.at(-1);
    const remaining =
      last === undefined ? 0 : this.lowerBound(`${prefix}\u{10FFFF}`) - this.upperBound(keyOf(last.metadata));
    return { items, more, remaining };
  }

  /**
   * Persists a change: the next global resourceVersion goes into `object` (which the collection
   * now owns and freezes), the key order and the log are updated and live watches are told.
   */
  commit(type: StoredEvent['type'], object: T, previous?: T): T {
    const rv = this.clock.next();
    object.metadata.resourceVersion = String(rv);
    deepFreeze(object);
    const key = keyOf(object.metadata);
    const replaced = this.objects.get(key);
    if (type === 'DELETED') this.remove(key);
    else this.put(key, object);
    const event: StoredEvent<T> = { type, rv, object, ...(previous === undefined ? {} : { previous }) };
    this.log.push(event);
    this.trim();
    for (const listener of [...this.listeners]) listener(event);
    // Only current objects keep their JSON: history is replayed rarely, and keeping the text of
    // every past version would double what a long run holds.
    if (replaced !== undefined) serialized.delete(replaced);
    if (type === 'DELETED') serialized.delete(object);
    return object;
  }

  private put(key: string, object: T): void {
    if (!this.objects.has(key)) this.keys.splice(this.lowerBound(key), 0, key);
    this.objects.set(key, object);
  }

  private remove(key: string): void {
    if (!this.objects.delete(key)) return;
    const index = this.lowerBound(key);
    if (this.keys[index] === key) this.keys.splice(index, 1);
  }

  /** Drops the events past the history limit; a watch from before the last one dropped expires. */
  private trim(): void {
    const excess = this.log.length - this.head - this.historyLimit;
    if (excess <= 0) return;
    this.head += excess;
    const dropped = this.log[this.head - 1];
    if (dropped !== undefined) this.compactedRv = Math.max(this.compactedRv, dropped.rv - 1);
    // Reclaim the dropped prefix now and then, not on every write.
    if (this.head > 1024 && this.head * 2 > this.log.length) {
      this.log = this.log.slice(this.head);
      this.head = 0;
    }
  }

  private firstAfter(rv: number): number {
    let [low, high] = [this.head, this.log.length];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.log[middle]?.rv ?? 0) > rv) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** The first index whose key is >= `key`. */
  private lowerBound(key: string): number {
    let [low, high] = [0, this.keys.length];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.keys[middle] ?? '') < key) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** The first index whose key is > `key`. */
  private upperBound(key: string): number {
    let [low, high] = [0, this.keys.length];
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.keys[middle] ?? '') <= key) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
