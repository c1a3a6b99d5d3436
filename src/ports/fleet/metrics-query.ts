import type { QueryResult } from '../../domain/fleet/order/snapshot.js';

/**
 * Prometheus's HTTP API, as a wave's analysis reads it: one instant query at the server's
 * address. What a server or the network can do — no answer, a timeout, an error status, an answer
 * that is not an instant vector or a scalar — is a result with a code (`ok: false`), never a
 * rejection: a measurement that could not be taken is data the analysis counts.
 */
export interface InstantQuery {
  /** The server's base URL, as the analysis names it (`http://prometheus.monitoring:9090`). */
  readonly address: string;
  readonly query: string;
  /** The whole request, answer included, must finish within this. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

export interface MetricsQuery {
  instant(request: InstantQuery): Promise<QueryResult>;
}
