/**
 * Kubelets for Nodes that no kubelet runs (the fleet's hosts all run on this one machine): each
 * Node gets a `Ready` condition and a Lease in kube-node-lease, renewed every second with a
 * four-second duration, as the admin. A test stops one kubelet's renewals, starts them again, or
 * turns a Node NotReady, as the node lifecycle controller would once its Lease ran out.
 */
import type { RealCluster } from '../support/kube/real-cluster.js';

const LEASES = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
const MERGE_PATCH = 'application/merge-patch+json';
const RENEW_EVERY_MS = 1_000;
const LEASE_SECONDS = 4;

/** A Lease's MicroTime: RFC 3339 with six fractional digits. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');

export class SimulatedKubelets {
  private readonly stopped = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> = Promise.resolve();

  private constructor(
    private readonly cluster: RealCluster,
    private readonly names: readonly string[],
  ) {}

  static async start(cluster: RealCluster, names: readonly string[]): Promise<SimulatedKubelets> {
    const kubelets = new SimulatedKubelets(cluster, names);
    for (const name of names) {
      await kubelets.setReady(name, 'True');
      const lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name },
        spec: { holderIdentity: name, leaseDurationSeconds: LEASE_SECONDS, renewTime: microTime(Date.now()) },
      };
      kubelets.expectOk(await cluster.admin('POST', LEASES, lease), `Lease ${name}`);
    }
    kubelets.timer = setInterval(() => {
      kubelets.renewing = kubelets.renewing.then(() => kubelets.renewAll());
    }, RENEW_EVERY_MS);
    return kubelets;
  }

  /** This kubelet renews its Lease no more. */
  stop(name: string): void {
    this.stopped.add(name);
  }

  resume(name: string): void {
    this.stopped.delete(name);
  }

  /** The Node's Ready condition, as the kubelet (True) or the node lifecycle controller (False, Unknown) writes it. */
  async setReady(name: string, status: 'True' | 'False' | 'Unknown'): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const condition = { type: 'Ready', status, reason: 'Simulated', lastHeartbeatTime: now, lastTransitionTime: now };
    const patch = { status: { conditions: [condition] } };
    this.expectOk(await this.cluster.admin('PATCH', `/api/v1/nodes/${name}/status`, patch, MERGE_PATCH), name);
  }

  async close(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    await this.renewing;
  }

  private async renewAll(): Promise<void> {
    for (const name of this.names) {
      if (this.stopped.has(name)) continue;
      const patch = { spec: { renewTime: microTime(Date.now()) } };
      // A renewal that fails is retried a second later, as a kubelet's is.
      await this.cluster.admin('PATCH', `${LEASES}/${name}`, patch, MERGE_PATCH).catch(() => undefined);
    }
  }

  private expectOk(answer: { status: number; text: string }, what: string): void {
    if (answer.status !== 200 && answer.status !== 201) throw new Error(`${what}: ${answer.status} ${answer.text}`);
  }
}
