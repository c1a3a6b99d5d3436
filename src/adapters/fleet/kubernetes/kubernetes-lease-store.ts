import { ClusterError } from '../../../domain/common/port-errors.js';
import { parseTimestamp } from '../../../domain/fleet/spec/time-text.js';
import type {
  LeaseRecord,
  LeaseStore,
  LeaseWriteOutcome,
  StoredLease,
} from '../../../ports/fleet/controller-cluster.js';
import type { ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import type { KubeHttp } from '../../common/kubernetes/kube-http.js';
import { ThrottledError } from '../../common/kubernetes/throttled-error.js';
import { leasePath } from './resource-paths.js';
import { UNPACED, type WritePacer } from './token-bucket.js';

/**
 * The leader-election Lease (`coordination.k8s.io/v1`) in the controller's namespace. Writes
 * carry the resourceVersion they were read at, so of two replicas racing for an expired lease
 * exactly one wins (the other gets 409); a create that finds the lease there is the same answer.
 */
export class KubernetesLeaseStore implements LeaseStore {
  constructor(
    private readonly http: KubeHttp,
    private readonly namespace: string,
    private readonly name: string,
    private readonly metrics: ControllerMetrics,
    /** Paces the writes (create, update) alone: a GET is a read. */
    private readonly pacer: WritePacer = UNPACED,
  ) {}

  async get(): Promise<StoredLease | null> {
    try {
      return toStored(await this.call('get', 'GET', leasePath(this.namespace, this.name)));
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return null;
      throw error;
    }
  }

  create(lease: LeaseRecord): Promise<LeaseWriteOutcome> {
    return this.write('create', 'POST', leasePath(this.namespace), { metadata: { name: this.name } }, lease);
  }

  update(resourceVersion: string, lease: LeaseRecord): Promise<LeaseWriteOutcome> {
    const metadata = { name: this.name, resourceVersion };
    return this.write('update', 'PUT', leasePath(this.namespace, this.name), { metadata }, lease);
  }

  private async write(
    verb: 'create' | 'update',
    method: 'POST' | 'PUT',
    path: string,
    head: { metadata: object },
    lease: LeaseRecord,
  ): Promise<LeaseWriteOutcome> {
    const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...head, spec: leaseSpec(lease) };
    try {
      const stored = toStored(await this.call(verb, method, path, body));
      return stored === null ? { kind: 'conflict' } : { kind: 'written', lease: stored };
    } catch (error) {
      if (error instanceof ClusterError && error.status === 409) return { kind: 'conflict' };
      throw error;
    }
  }

  private async call(
    verb: 'get' | 'create' | 'update',
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    body?: object,
  ): Promise<unknown> {
    if (method !== 'GET') await this.pacer.take();
    try {
      const answer = await this.http.call(method, path, body === undefined ? {} : { body });
      this.metrics.apiRequest({ verb, resource: 'leases', code: method === 'POST' ? 201 : 200 });
      return answer;
    } catch (error) {
      this.metrics.apiRequest({ verb, resource: 'leases', code: error instanceof ClusterError ? error.status : null });
      if (error instanceof ThrottledError) this.pacer.throttled(error.retryAfterMs);
      if (error instanceof ClusterError && error.status === 401)
        throw new ClusterError(401, error.message, 'unauthorized');
      throw error;
    }
  }
}

/** MicroTime: RFC 3339 with microseconds, as the Lease API stores acquire and renew times. */
function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, '000Z');
}

function leaseSpec(lease: LeaseRecord): object {
  return {
    holderIdentity: lease.holder,
    leaseDurationSeconds: lease.leaseDurationSeconds,
    acquireTime: microTime(lease.acquireMs),
    renewTime: microTime(lease.renewMs),
    leaseTransitions: lease.transitions,
  };
}

function toStored(raw: unknown): StoredLease | null {
  const object = raw as { metadata?: { resourceVersion?: unknown }; spec?: Record<string, unknown> } | null;
  const resourceVersion = object?.metadata?.resourceVersion;
  if (typeof resourceVersion !== 'string' || resourceVersion === '') return null;
  const spec = object?.spec ?? {};
  const number = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
  return {
    resourceVersion,
    lease: {
      holder: typeof spec['holderIdentity'] === 'string' ? spec['holderIdentity'] : '',
      leaseDurationSeconds: number(spec['leaseDurationSeconds']),
      acquireMs: parseTimestamp(spec['acquireTime']) ?? 0,
      renewMs: parseTimestamp(spec['renewTime']) ?? 0,
      transitions: number(spec['leaseTransitions']),
    },
  };
}
