// What the controller adapter's tests share: a fake API server on loopback with a kubeconfig for
// it, the adapter connected to it over real HTTP, a ControllerMetrics that keeps every request
// sample as data, a collector of informer events with bounded waits, and valid objects to seed.

import { KubernetesControllerCluster } from '../../../../src/adapters/fleet/kubernetes/kubernetes-controller-cluster.js';
import type { InformerSettings } from '../../../../src/adapters/fleet/kubernetes/informer.js';
import type { WritePacer } from '../../../../src/adapters/fleet/kubernetes/token-bucket.js';
import { connectKubeHttp } from '../../../../src/adapters/common/kubernetes/kube-connection.js';
import type { KubeHttp } from '../../../../src/adapters/common/kubernetes/kube-http.js';
import { loadWatchClient } from '../../../../src/adapters/common/kubernetes/kube-watch.js';
import { MemoryClock } from '../../../../src/adapters/common/memory/memory-clock.js';
import type { RolloutEvent } from '../../../../src/domain/fleet/decide/actions.js';
import type { MachineOperationManifest } from '../../../../src/domain/fleet/decide/child-manifest.js';
import type { AgentReleaseStatus } from '../../../../src/domain/fleet/status/release-status.js';
import type { AgentRolloutStatus } from '../../../../src/domain/fleet/status/rollout-status.js';
import type { Clock } from '../../../../src/ports/common/clock.js';
import type { ApiRequestSample, ControllerMetrics } from '../../../../src/ports/fleet/controller-metrics.js';
import {
  startFakeApiServer,
  type CustomObjectInput,
  type FakeApiServer,
  type FakeApiServerOptions,
} from '../../../support/kube/fake-apiserver.js';
import { writeKubeconfig } from '../../../support/kube/machine-operations.js';
import { makeScratch } from '../../../support/real-tree.js';
import { RecordingLogger } from '../../../support/recording-logger.js';
import { waitFor } from '../../../support/wait-for.js';

export const CONTROLLER_NAMESPACE = 'agent-upgrade-system';
export const IDENTITY = 'controller-a';

/** Quick retries, long watches (nothing ends them but the test), a fixed jitter: a backoff is 3/4 of its ceiling. */
export const FAST_INFORMERS: InformerSettings = {
  pageSize: 500,
  watchTimeoutMinSeconds: 60,
  watchTimeoutMaxSeconds: 60,
  idleTimeoutMs: 20_000,
  retryDelayMs: 400,
  retryDelayMaxMs: 1_600,
  unauthorized: { attempts: 3, windowMs: 1_000 },
  random: () => 0.5,
};

/** Keeps every API request sample; the rest of the metrics go nowhere. */
export class RecordingMetrics implements ControllerMetrics {
  readonly requests: ApiRequestSample[] = [];

  rolloutObserved(): void {}
  rolloutForgotten(): void {}
  halted(): void {}
  reconciled(): void {}
  leading(): void {}
  trustMetadataObserved(): void {}
  apiRequest(sample: ApiRequestSample): void {
    this.requests.push(sample);
  }
}

export interface HarnessOptions {
  readonly fake?: FakeApiServerOptions;
  readonly clock?: Clock;
  readonly informers?: Partial<InformerSettings>;
  readonly eventsNamespace?: string;
  /** Paces the writes; default none. */
  readonly pacer?: WritePacer;
}

export interface Harness {
  readonly fake: FakeApiServer;
  readonly http: KubeHttp;
  readonly cluster: KubernetesControllerCluster;
  readonly metrics: RecordingMetrics;
  readonly clock: Clock;
  readonly kubeconfig: string;
  close(): Promise<void>;
}

/** A fake API server (with the controller's namespace) and the adapter connected to it with a kubeconfig file. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const fake = await startFakeApiServer({ namespaces: [CONTROLLER_NAMESPACE], ...options.fake });
  const scratch = makeScratch('controller-adapter-');
  const kubeconfig = writeKubeconfig(scratch.root, fake.origin);
  const clock = options.clock ?? new MemoryClock();
  const metrics = new RecordingMetrics();
  const http = await connectKubeHttp(kubeconfig, { env: {} });
  const cluster = new KubernetesControllerCluster({
    http,
    WatchClient: await loadWatchClient(),
    clock,
    logger: new RecordingLogger(),
    metrics,
    informers: { ...FAST_INFORMERS, ...options.informers },
    namespace: options.eventsNamespace ?? 'default',
    instance: IDENTITY,
    ...(options.pacer === undefined ? {} : { pacer: options.pacer }),
  });
  const close = async (): Promise<void> => {
    cluster.close();
    await fake.close();
    scratch.cleanup();
  };
  return { fake, http, cluster, metrics, clock, kubeconfig, close };
}

/** Everything an informer delivered, in order, with bounded waits on it. */
export class EventLog<E> {
  readonly events: E[] = [];
  readonly push = (event: E): void => void this.events.push(event);

  /** Waits (at most `timeoutMs`) until an event satisfies `match`; throws when none did. */
  async next(match: (event: E) => boolean, timeoutMs = 10_000): Promise<E> {
    const found = () => this.events.find(match);
    if (!(await waitFor(() => found() !== undefined, timeoutMs, 10)))
      throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(this.events)}`);
    return found() as E;
  }
}

/** Resolves once `promise` settles or `timeoutMs` passed, so an afterEach never hangs. */
export async function settled(promise: Promise<unknown> | undefined, timeoutMs = 5_000): Promise<void> {
  if (promise === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
  await Promise.race([promise.catch(() => undefined), timeout]);
  clearTimeout(timer);
}

export function releaseInput(name: string, version = '1.4.2'): CustomObjectInput {
  return {
    metadata: { name },
    spec: {
      version,
      artifacts: [
        { arch: 'amd64', downloadURL: `https://releases.example.com/${version}.tgz`, sha256: 'a'.repeat(64) },
      ],
    },
  };
}

export function rolloutInput(name: string, release: string): CustomObjectInput {
  return {
    metadata: { name },
    spec: {
      releaseRef: { name: release },
      targets: { selector: {} },
      strategy: { waves: [{ name: 'all', percent: 100 }] },
    },
  };
}

export function rolloutStatus(phase: AgentRolloutStatus['phase'], succeeded: number): AgentRolloutStatus {
  const excluded = { optedOut: 0, alreadyAtTarget: 0, conflict: 0, vanished: 0, noArtifact: 0 };
  return {
    observedGeneration: 1,
    phase,
    progress: `${succeeded}/3`,
    counts: {
      targets: 3,
      excluded,
      pending: 3 - succeeded,
      inFlight: 0,
      succeeded,
      failed: 0,
      timedOut: 0,
      lost: 0,
      rolledBack: 0,
    },
    waves: [],
    failures: { sample: [], byReason: {}, byLabel: {} },
    conditions: [],
  };
}

export function releaseStatus(validated: 'True' | 'False'): AgentReleaseStatus {
  const condition = {
    type: 'Validated',
    status: validated,
    reason: validated === 'True' ? 'Valid' : 'Invalid',
    message: '',
    lastTransitionTime: '2025-01-01T00:00:00Z',
    observedGeneration: 1,
  } as const;
  return { observedGeneration: 1, conditions: [condition] };
}

export function operationManifest(
  name: string,
  machineRef: string,
  rolloutUid = 'uid-fleet',
): MachineOperationManifest {
  return {
    apiVersion: 'unbounded-cloud.io/v1alpha3',
    kind: 'MachineOperation',
    metadata: {
      name,
      labels: { 'agent-upgrade.dev/rollout': 'fleet' },
      ownerReferences: [
        {
          apiVersion: 'agent-upgrade.dev/v1alpha1',
          kind: 'AgentRollout',
          name: 'fleet',
          uid: rolloutUid,
          controller: true,
        },
      ],
    },
    spec: {
      machineRef,
      operationKind: 'AgentUpgrade',
      parameters: { downloadURL: 'https://releases.example.com/1.4.2.tgz', sha256: 'a'.repeat(64) },
    },
  };
}

export function rolloutEvent(name: string, uid: string): RolloutEvent {
  return {
    type: 'Normal',
    reason: 'WaveStarted',
    message: 'wave all started: 3 machines',
    regarding: { kind: 'AgentRollout', name, uid },
  };
}
