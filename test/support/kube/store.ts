import { randomUUID } from 'node:crypto';
// The fake's storage: one collection per resource (object-collection.ts) under one global,
// monotonically increasing resourceVersion (as etcd's revision is global across every resource),
// and the custom resources' write semantics (custom-store.ts) over their collections.

import { CustomResourceStore } from './custom-store.js';
import { ObjectCollection, type RevisionClock } from './object-collection.js';
import type { ResourceDescriptor } from './resources.js';
import type { StoredObject } from './types.js';

export interface StoreOptions {
  /** How many events each resource's watch log keeps (default: all of them). */
  readonly historyLimit?: number;
  /** Whether status writes are remembered for statusWrites() (default true). */
  readonly recordStatusWrites?: boolean;
  /** The clock of server-assigned timestamps, in epoch milliseconds (default Date.now). */
  readonly now?: () => number;
  /** Server-assigned uids (default random UUIDs); a simulation passes a seeded sequence to be replayable. */
  readonly uid?: () => string;
}

export class KubeStore implements RevisionClock {
  // Starts above 0 so a list never reports "0", which a watch would read as "any version"; and
  // everything before the fake started counts as compacted, as the history before a real watch
  // cache was filled is gone: a watch from resourceVersion 1 is told 410.
  private rv = 2;
  private readonly collections: ObjectCollection[] = [];
  private readonly historyLimit: number;

  constructor(private readonly options: StoreOptions = {}) {
    const limit = options.historyLimit ?? Number.POSITIVE_INFINITY;
    if (!(limit >= 1)) throw new RangeError(`historyLimit must be at least 1: ${limit}`);
    this.historyLimit = limit;
  }

  /** Now as RFC 3339 at second precision, as kube-apiserver renders metav1.Time. */
  readonly newUid = (): string => (this.options.uid ?? randomUUID)();
  readonly timestamp = (): string => new Date((this.options.now ?? Date.now)()).toISOString().replace(/\.\d{3}Z$/, 'Z');

  current(): number {
    return this.rv;
  }

  next(): number {
    this.rv += 1;
    return this.rv;
  }

  /** The current global resourceVersion. */
  currentRv(): number {
    return this.rv;
  }

  collection<T extends StoredObject>(resource: ResourceDescriptor): ObjectCollection<T> {
    const collection = new ObjectCollection<T>(resource, this, this.historyLimit, 1);
    this.collections.push(collection as unknown as ObjectCollection);
    return collection;
  }

  customResources(resource: ResourceDescriptor): CustomResourceStore {
    return new CustomResourceStore(
      this.collection(resource),
      this.timestamp,
      this.options.recordStatusWrites ?? true,
      this.newUid,
    );
  }

  /**
   * Forgets every event up to now. The counter then moves one step (an unrelated write elsewhere in
   * etcd, as happens constantly in a real cluster) so a client that relists gets a version it can
   * watch from; otherwise the relist's version would itself be "too old" and the client would loop.
   */
  compact(): void {
    for (const collection of this.collections) collection.compactThrough(this.rv);
    this.rv += 1;
  }
}
