// The two API servers the end-to-end daemon suite runs against, behind one face: the project's
// fake (plain HTTP, a bearer token; what the suite can break on demand) and a real kube-apiserver
// that the daemon reaches as a kubelet would, with a node's client certificate, under the shipped
// CRD, RBAC and admission policy. What the daemon wrote is read back the same way from both:
// the fake records status writes, the real server's audit log holds their bodies.

import { readFileSync } from 'node:fs';
import { startFakeApiServer, type FakeApiServer, type MachineOperationInput } from '../support/kube/fake-apiserver.js';
import { writeKubeconfig } from '../support/kube/machine-operations.js';
import { CRD, OPS, POLICY, RBAC, RealCluster } from '../support/kube/real-cluster.js';

export interface OperationStatus {
  readonly phase?: string;
  readonly message?: string;
  readonly conditions?: readonly { readonly reason?: string }[];
}

export interface E2eCluster {
  /** The kubeconfig the daemon is configured with. */
  readonly kubeconfigPath: string;
  /** Strings of the daemon's credentials, which must never reach its log. */
  readonly secrets: readonly string[];
  create(op: MachineOperationInput): Promise<void>;
  status(name: string): Promise<OperationStatus | undefined>;
  /** The status stanzas the daemon wrote to `name`, in order. */
  statusWrites(name: string): Promise<Record<string, unknown>[]>;
  /** True once the daemon's watch of MachineOperations is open. */
  watching(): Promise<boolean>;
  close(): Promise<void>;
}

export interface FakeCluster extends E2eCluster {
  /** The fake itself, for the cases that inject faults. */
  readonly api: FakeApiServer;
}

export async function fakeCluster(dir: string): Promise<FakeCluster> {
  const api = await startFakeApiServer({ bookmarkIntervalMs: 1_000 });
  return {
    api,
    kubeconfigPath: writeKubeconfig(dir, api.origin),
    secrets: ['test-token'],
    create: async (op) => void api.create(op),
    status: async (name) => api.get(name)?.status as OperationStatus | undefined,
    statusWrites: async (name) => api.statusWrites(name),
    watching: async () => api.openWatches().length > 0,
    close: () => api.close(),
  };
}

/** A real kube-apiserver; the daemon is `system:node:<machine>` with a client certificate. */
export async function realCluster(machine: string): Promise<E2eCluster> {
  const cluster = await RealCluster.start([CRD, RBAC, POLICY]);
  try {
    const identity = await cluster.node(machine);
    const user = `system:node:${machine}`;
    // The key's base64 body: a line of it in a log would be the credential leaking.
    const key = readFileSync(identity.keyPath, 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('-----'));
    return {
      kubeconfigPath: identity.kubeconfigPath,
      secrets: key,
      create: async (op) => {
        const answer = await cluster.admin('POST', OPS, op);
        if (answer.status !== 201) throw new Error(`creating ${op.metadata.name}: ${answer.status} ${answer.text}`);
      },
      status: async (name) => {
        const answer = await cluster.admin('GET', `${OPS}/${name}`);
        return answer.status === 200 ? (answer.json as { status?: OperationStatus }).status : undefined;
      },
      statusWrites: async (name) =>
        (await cluster.audit())
          .filter(
            (e) =>
              e.user.username === user &&
              e.stage === 'ResponseComplete' &&
              e.objectRef?.name === name &&
              e.objectRef.subresource === 'status' &&
              e.responseStatus?.code === 200,
          )
          .map((e) => e.requestObject?.status ?? {}),
      watching: async () =>
        (await cluster.audit()).some(
          (e) => e.user.username === user && e.verb === 'watch' && e.stage === 'ResponseStarted',
        ),
      close: () => cluster.stop(),
    };
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}
