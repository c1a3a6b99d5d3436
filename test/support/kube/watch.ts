// One watch connection: a 200 chunked application/json response carrying newline-delimited
// {"type","object"} events, exactly the framing the client's readline-based Watch expects. With a
// selector, an object that stops matching is sent as DELETED (its last matching state, at the
// new resourceVersion) and one that starts matching as ADDED, as the real watch cache does. Each
// stored object is serialized once for every watch it goes to (object-collection.ts).

import type { ServerResponse } from 'node:http';
import type { JsonObject } from './json.js';
import { jsonOf, type ObjectCollection, type RevisionClock, type StoredEvent } from './object-collection.js';
import { apiVersionOf } from './resources.js';
import type { Selector } from './selectors.js';
import { failure } from './status.js';
import type { Cancel, Timers } from './timers.js';
import type { StoredObject, WatchEventType } from './types.js';

export interface WatchInfo {
  /** The resource's plural (`nodes`, `machineoperations`, …). */
  readonly resource: string;
  /** The query the client opened the watch with (fieldSelector, resourceVersion, …). */
  readonly query: Readonly<Record<string, string>>;
  /** True once silenceWatches() has muted it. */
  readonly silenced: boolean;
}

export interface WatchStreamOptions {
  readonly res: ServerResponse;
  readonly collection: ObjectCollection;
  readonly clock: RevisionClock;
  readonly timers: Timers;
  readonly query: Readonly<Record<string, string>>;
  readonly selector: Selector;
  /** Undefined means "from now, with the current state as synthetic ADDED events" (as for "0"). */
  readonly resourceVersion: number | undefined;
  readonly bookmarkIntervalMs: number | undefined;
  readonly timeoutSeconds: number | undefined;
  /** Called for every ADDED, MODIFIED or DELETED event written to the client. */
  readonly onObjectEvent: () => void;
  readonly onClose: () => void;
}

export class WatchStream {
  private silenced = false;
  /** The newest resourceVersion this stream has told the client, for the bookmark at the deadline. */
  private sentRv = 0;
  private readonly cancels: Cancel[] = [];
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly o: WatchStreamOptions) {
    o.res.on('close', () => {
      this.stop();
      o.onClose();
    });
  }

  get info(): WatchInfo {
    return { resource: this.o.collection.resource.plural, query: { ...this.o.query }, silenced: this.silenced };
  }

  start(): void {
    const { res, collection, clock, resourceVersion } = this.o;
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    res.flushHeaders(); // the client's watch() only resolves once the headers arrive

    if (resourceVersion !== undefined && collection.isExpired(resourceVersion)) {
      // A real server accepts the watch, then reports the expiry in-band and hangs up.
      this.send('ERROR', failure(410, 'too old resource version', 'Expired'));
      res.end();
      return;
    }
    this.sentRv = resourceVersion ?? clock.current();
    if (resourceVersion === undefined) {
      const { items } = collection.page('', undefined, undefined, this.o.selector);
      for (const object of items) this.emit({ type: 'ADDED', rv: 0, object });
    } else {
      for (const event of collection.eventsAfter(resourceVersion)) this.emit(event);
    }
    // Subscribing in the same synchronous turn as the replay means no write can fall in between.
    this.unsubscribe = collection.subscribe((event) => this.emit(event));

    const { bookmarkIntervalMs, timeoutSeconds, timers } = this.o;
    if (bookmarkIntervalMs !== undefined) this.cancels.push(timers.every(bookmarkIntervalMs, () => this.bookmark()));
    if (timeoutSeconds !== undefined) {
      this.cancels.push(
        timers.after(timeoutSeconds * 1000, () => {
          // The real server sends one last bookmark at the deadline when it has news for the client.
          if (bookmarkIntervalMs !== undefined && clock.current() > this.sentRv) this.bookmark();
          this.end();
        }),
      );
    }
  }

  private bookmark(): void {
    const { resource } = this.o.collection;
    const resourceVersion = String(this.o.clock.current());
    this.send('BOOKMARK', { kind: resource.kind, apiVersion: apiVersionOf(resource), metadata: { resourceVersion } });
  }

  /** Keeps the connection open but sends nothing more, ever; not even the timeout's clean end. */
  silence(): void {
    this.silenced = true;
    this.stop();
  }

  /** Tears the TCP connection down mid-stream (no terminating chunk). */
  drop(): void {
    this.stop();
    this.o.res.socket?.destroy();
  }

  /** Ends the response cleanly, as the server does when timeoutSeconds elapses. */
  end(): void {
    this.stop();
    if (!this.o.res.writableEnded) this.o.res.end();
  }

  private stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const cancel of this.cancels.splice(0)) cancel();
  }

  private emit(event: StoredEvent): void {
    const { selector } = this.o;
    const now = selector(event.object);
    if (event.type !== 'MODIFIED' || event.previous === undefined) {
      if (now) this.send(event.type, event.object);
      return;
    }
    const before = selector(event.previous);
    if (before && now) this.send('MODIFIED', event.object);
    else if (now) this.send('ADDED', event.object);
    else if (before) {
      const left = structuredClone(event.previous);
      left.metadata.resourceVersion = String(event.rv);
      this.send('DELETED', left);
    }
  }

  private send(type: WatchEventType, object: StoredObject | JsonObject): void {
    const { res } = this.o;
    if (this.silenced || res.writableEnded || res.destroyed) return;
    const rv = Number((object.metadata as { resourceVersion?: unknown } | undefined)?.resourceVersion);
    if (Number.isInteger(rv) && rv > this.sentRv) this.sentRv = rv;
    res.write(`{"type":${JSON.stringify(type)},"object":${jsonOf(object)}}\n`);
    if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.o.onObjectEvent();
  }
}
