// Replicas of the real `agent-upgrade controller` process for rollout tests on a real API server,
// each with its own metrics port, plus the releases they roll out: archives of compiled test
// agents served on loopback and the AgentRelease objects that name them.

import { join } from 'node:path';
import { releaseArchive } from '../archive/index.js';
import { serve, type HostileServer } from '../http/hostile-server.js';
import { CLI, TEST_IDENTITY } from '../systemd/systemd-host.js';
import { waitFor } from '../wait-for.js';
import { freeLoopbackPort, ManagedProcess } from './real-apiserver-processes.js';
import type { RealCluster } from './real-cluster.js';
import { sha256 } from './rollout-fleet.js';

export const CONTROLLER_NAMESPACE = 'agent-upgrade-system';
export const CONTROLLER_ACCOUNT = 'agent-upgrade-controller';
export const CONTROLLER_USER = `system:serviceaccount:${CONTROLLER_NAMESPACE}:${CONTROLLER_ACCOUNT}`;
const LEASE_PATH = `/apis/coordination.k8s.io/v1/namespaces/${CONTROLLER_NAMESPACE}/leases/agent-upgrade-controller`;
/** Test-sized leader election: a dead leader's lease runs out in 4 s. */
export const LEASE_DURATION_MS = 4_000;

export class ControllerReplica {
  private constructor(
    readonly identity: string,
    private readonly process: ManagedProcess,
    readonly metricsPort: number,
  ) {}

  /** Starts `agent-upgrade controller` as `identity` and waits (bounded) until it serves /readyz. */
  static async start(
    identity: string,
    kubeconfig: string,
    logDir: string,
    extraArgs: readonly string[] = [],
  ): Promise<ControllerReplica> {
    const port = await freeLoopbackPort();
    const args = [
      'controller',
      ...extraArgs,
      ...['--kubeconfig', kubeconfig, '--namespace', CONTROLLER_NAMESPACE, '--identity', identity],
      ...['--lease-duration', `${LEASE_DURATION_MS / 1000}s`, '--renew-deadline', '3s', '--retry-period', '1s'],
      ...['--metrics-address', `127.0.0.1:${port}`, '--log-level', 'info'],
    ];
    const child = ManagedProcess.start(`controller ${identity}`, CLI, args, join(logDir, `controller-${identity}.log`));
    const replica = new ControllerReplica(identity, child, port);
    if (!(await waitFor(async () => child.exited || (await replica.get('/readyz')) === 200, 60_000, 250))) {
      await child.stop();
      throw new Error(`controller ${identity} did not become ready:\n${child.logTail()}`);
    }
    if (child.exited) throw new Error(`controller ${identity} exited:\n${child.logTail()}`);
    return replica;
  }

  get exited(): boolean {
    return this.process.exited;
  }

  /** SIGKILL: no hand-back of the Lease, no last status write, as a crashed pod. */
  async kill(): Promise<void> {
    if (this.process.pid !== undefined && !this.process.exited) process.kill(this.process.pid, 'SIGKILL');
    if (!(await waitFor(() => this.process.exited, 10_000, 50))) throw new Error(`${this.identity} survived SIGKILL`);
  }

  stop(): Promise<void> {
    return this.process.stop(10_000);
  }

  logTail(): string {
    return this.process.logTail();
  }

  /** The value of `agent_upgrade_controller_leader` on /metrics; null when it is not served. */
  async leaderGauge(): Promise<number | null> {
    const text = await this.fetchText('/metrics');
    const match = text === null ? null : /^agent_upgrade_controller_leader (\d+)$/m.exec(text);
    return match === null ? null : Number(match[1]);
  }

  private async get(path: string): Promise<number | null> {
    const answer = await fetch(`http://127.0.0.1:${this.metricsPort}${path}`, {
      signal: AbortSignal.timeout(2_000),
    }).catch(() => null);
    await answer?.body?.cancel();
    return answer?.status ?? null;
  }

  private async fetchText(path: string): Promise<string | null> {
    const answer = await fetch(`http://127.0.0.1:${this.metricsPort}${path}`, {
      signal: AbortSignal.timeout(2_000),
    }).catch(() => null);
    return answer?.ok === true ? answer.text() : null;
  }
}

/** Who holds the leader Lease now, and how often it changed hands ('' and 0 before anyone took it). */
export async function leaseHolder(cluster: RealCluster): Promise<{ holder: string; transitions: number }> {
  const answer = await cluster.admin('GET', LEASE_PATH);
  if (answer.status === 404) return { holder: '', transitions: 0 };
  const spec = (answer.json as { spec?: { holderIdentity?: string; leaseTransitions?: number } }).spec ?? {};
  return { holder: spec.holderIdentity ?? '', transitions: spec.leaseTransitions ?? 0 };
}

/**
 * Serves one archive per architecture (each holding the given agent binary under the member name
 * of this host's architecture: every daemon runs here) and returns the AgentRelease naming them.
 */
export function publishRelease(
  releases: HostileServer,
  name: string,
  version: string,
  binaries: { readonly amd64: Uint8Array; readonly arm64: Uint8Array },
): object {
  const artifacts = (['amd64', 'arm64'] as const).map((arch) => {
    const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, binaries[arch]);
    const path = `/${name}-${arch}.tar.gz`;
    releases.route(path, serve(archive));
    return { arch, downloadURL: releases.url(path), sha256: sha256(archive) };
  });
  return {
    apiVersion: 'agent-upgrade.dev/v1alpha1',
    kind: 'AgentRelease',
    metadata: { name },
    spec: { version, artifacts },
  };
}
