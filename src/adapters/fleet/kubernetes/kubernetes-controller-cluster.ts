import { ClusterError } from '../../../domain/common/port-errors.js';
import type { RolloutEvent } from '../../../domain/fleet/decide/actions.js';
import type { MachineOperationManifest } from '../../../domain/fleet/decide/child-manifest.js';
import type { AgentReleaseStatus } from '../../../domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../../domain/fleet/status/rollout-status.js';
import type { Clock } from '../../../ports/common/clock.js';
import type {
  ControllerCluster,
  CreateOutcome,
  InformerEvent,
  ResourceKind,
  ResourceShapes,
  StatusUpdateOutcome,
} from '../../../ports/fleet/controller-cluster.js';
import type { ApiRequestSample, ControllerMetrics } from '../../../ports/fleet/controller-metrics.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { KubeHttp } from '../../common/kubernetes/kube-http.js';
import type { WatchClientClass } from '../../common/kubernetes/kube-watch.js';
import { ThrottledError } from '../../common/kubernetes/throttled-error.js';
import { UnauthorizedStreak } from '../../common/kubernetes/unauthorized-streak.js';
import { eventBody } from './event-body.js';
import { runInformer, type InformerParts, type InformerSettings } from './informer.js';
import { readNode, readNodeLease, readOperation, readRelease, readRollout } from './read-objects.js';
import {
  NODE_LEASES_PATH,
  NODES_PATH,
  OPERATIONS_PATH,
  RELEASES_PATH,
  ROLLOUTS_PATH,
  eventsPath,
  objectPath,
} from './resource-paths.js';
import { UNPACED, type WritePacer } from './token-bucket.js';

export interface ControllerClusterOptions {
  readonly http: KubeHttp;
  readonly WatchClient: WatchClientClass;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  readonly informers: InformerSettings;
  /** Where Events are recorded (the controller's own namespace). */
  readonly namespace: string;
  /** `reportingInstance` of the Events: this replica's identity. */
  readonly instance: string;
  /** Every write waits for it (token-bucket.ts); default none. Reads (the informers) are not paced. */
  readonly pacer?: WritePacer;
}

type Verb = ApiRequestSample['verb'];

/**
 * The controller's cluster over the API server: five informers, status updates of the status
 * subresource by PUT (the resourceVersion in the body is the guard: 409 when stale), the one
 * merge patch a release allows, idempotent creates (409 AlreadyExists is success), and Events.
 * Every write waits for the pacer's token first, and a 429 with Retry-After pauses the pacer.
 * Every request is counted by verb and resource; a failure is a ClusterError.
 */
export class KubernetesControllerCluster implements ControllerCluster {
  private readonly streak: UnauthorizedStreak;
  private eventSequence = 0;

  constructor(private readonly o: ControllerClusterOptions) {
    this.streak = new UnauthorizedStreak(o.informers.unauthorized, o.clock);
  }

  async inform(onEvent: (event: InformerEvent) => void, signal: AbortSignal): Promise<void> {
    const ends = new AbortController();
    const stop = (): void => ends.abort();
    signal.addEventListener('abort', stop, { once: true });
    // A signal that aborted before the call never fires 'abort' again.
    if (signal.aborted) stop();
    const inform = <K extends ResourceKind>(
      kind: K,
      resource: string,
      path: string,
      read: (raw: unknown) => ResourceShapes[K] | null,
    ): Promise<void> =>
      runInformer(
        this.informerParts(resource),
        { resource, path, read },
        (event) => onEvent({ ...event, kind } as InformerEvent),
        ends.signal,
      ).catch((error: unknown) => {
        // One informer failing for good (refused credentials) stops the others.
        stop();
        throw error;
      });
    try {
      await Promise.all([
        inform('nodes', 'nodes', NODES_PATH, readNode),
        inform('releases', 'agentreleases', RELEASES_PATH, readRelease),
        inform('rollouts', 'agentrollouts', ROLLOUTS_PATH, readRollout),
        inform('operations', 'machineoperations', OPERATIONS_PATH, readOperation),
        inform('leases', 'leases', NODE_LEASES_PATH, readNodeLease),
      ]);
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /** What an informer of `resource` works with: the one connection, clock and credential streak. */
  informerParts(resource: string): InformerParts {
    return {
      ...this.o,
      streak: this.streak,
      settings: this.o.informers,
      count: (verb, code) => this.o.metrics.apiRequest({ verb, resource, code }),
    };
  }

  updateRolloutStatus(name: string, resourceVersion: string, status: AgentRolloutStatus): Promise<StatusUpdateOutcome> {
    return this.putStatus(ROLLOUTS_PATH, 'agentrollouts', 'AgentRollout', name, resourceVersion, status);
  }

  updateReleaseStatus(name: string, resourceVersion: string, status: AgentReleaseStatus): Promise<StatusUpdateOutcome> {
    return this.putStatus(RELEASES_PATH, 'agentreleases', 'AgentRelease', name, resourceVersion, status);
  }

  async quarantineRelease(name: string, quarantine: { quarantined: true; reason: string }): Promise<boolean> {
    try {
      await this.call('patch', 'agentreleases', 'PATCH', objectPath(RELEASES_PATH, name), {
        body: { spec: { quarantine } },
        contentType: 'application/merge-patch+json',
      });
      return true;
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return false;
      throw error;
    }
  }

  async createOperation(operation: MachineOperationManifest): Promise<CreateOutcome> {
    try {
      await this.call('create', 'machineoperations', 'POST', OPERATIONS_PATH, { body: operation });
      return 'created';
    } catch (error) {
      if (error instanceof ClusterError && error.status === 409) return 'exists';
      throw error;
    }
  }

  async recordEvent(event: RolloutEvent, atMs: number): Promise<void> {
    this.eventSequence += 1;
    const body = eventBody(event, atMs, this.o.instance, this.eventSequence);
    await this.call('create', 'events', 'POST', eventsPath(this.o.namespace), { body });
  }

  close(): void {
    this.o.http.close();
  }

  private async putStatus(
    collection: string,
    resource: string,
    kind: string,
    name: string,
    resourceVersion: string,
    status: object,
  ): Promise<StatusUpdateOutcome> {
    const body = { apiVersion: 'agent-upgrade.dev/v1alpha1', kind, metadata: { name, resourceVersion }, status };
    try {
      await this.call('update', resource, 'PUT', objectPath(collection, name, 'status'), { body });
      return 'updated';
    } catch (error) {
      if (error instanceof ClusterError && error.status === 409) return 'conflict';
      if (error instanceof ClusterError && error.status === 404) return 'not-found';
      throw error;
    }
  }

  private async call(
    verb: Verb,
    resource: string,
    method: 'POST' | 'PUT' | 'PATCH',
    path: string,
    options: { readonly body: object; readonly contentType?: string },
  ): Promise<unknown> {
    const pacer = this.o.pacer ?? UNPACED;
    await pacer.take();
    try {
      const answer = await this.o.http.call(method, path, {
        ...options,
        query: { fieldManager: 'agent-upgrade-controller' },
      });
      this.o.metrics.apiRequest({ verb, resource, code: method === 'POST' ? 201 : 200 });
      this.streak.succeeded();
      return answer;
    } catch (error) {
      const status = error instanceof ClusterError ? error.status : null;
      this.o.metrics.apiRequest({ verb, resource, code: status });
      if (error instanceof ThrottledError) pacer.throttled(error.retryAfterMs);
      throw translated(error);
    }
  }
}

/** A 401 that survived the credentials being read again is the credentials' fault. */
function translated(error: unknown): unknown {
  if (error instanceof ClusterError && error.status === 401)
    return new ClusterError(401, error.message, 'unauthorized');
  return error;
}
