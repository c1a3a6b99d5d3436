// A real kube-apiserver (real-apiserver.ts) set up as a cluster running the daemon would be: the shipped manifests
// applied, node identities issued, and an audit log of every MachineOperation and Node request,
// which is how these tests see what a client asked and what the server answered (status codes,
// never message text). Also: etcd compaction on demand, and small admin helpers.

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { waitFor } from '../wait-for.js';
import { RealApiServer, type KubeIdentity, type KubeResponse } from './real-apiserver.js';

const REPO = resolve(import.meta.dirname, '../../..');
export const CRD = join(REPO, 'deploy/machineoperation-crd.yaml');
export const CRD_PRE_130 = join(REPO, 'deploy/machineoperation-crd-pre-1.30.yaml');
export const RBAC = join(REPO, 'deploy/agent-upgrade-rbac.yaml');
export const POLICY = join(REPO, 'deploy/agent-upgrade-admission-policy.yaml');
export const OPS = '/apis/unbounded-cloud.io/v1alpha3/machineoperations';
export const MERGE_PATCH = 'application/merge-patch+json';

// Status writes with their bodies (what a daemon reported, what a rollout controller decided),
// everything else on operations, Nodes and the rollout resources without (who asked what, and the
// answer's code).
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Request
    verbs: [patch, update]
    resources:
      - group: unbounded-cloud.io
        resources: [machineoperations/status]
      - group: agent-upgrade.dev
        resources: [agentrollouts/status]
  - level: Metadata
    resources:
      - group: unbounded-cloud.io
        resources: [machineoperations, machineoperations/status]
      - group: agent-upgrade.dev
        resources: [agentrollouts, agentreleases, agentreleases/status]
      - group: ""
        resources: [nodes]
  - level: None
`;

/** One audit record, as far as the tests read it. */
export interface AuditEvent {
  readonly stage: string;
  readonly verb: string;
  readonly requestURI: string;
  readonly user: { readonly username: string };
  readonly objectRef?: { readonly resource?: string; readonly name?: string; readonly subresource?: string };
  readonly responseStatus?: { readonly code?: number };
  /** When the stage was reached: RFC 3339 with microseconds, so records order by it. */
  readonly stageTimestamp?: string;
  /** The request body, for status writes. */
  readonly requestObject?: { readonly status?: Record<string, unknown> };
}

export class RealCluster {
  private constructor(
    readonly server: RealApiServer,
    private readonly auditDir: string,
  ) {}

  /** Starts the server with an audit log, applies `manifests` and waits until the CRD serves. */
  static async start(manifests: readonly string[], extraArgs: readonly string[] = []): Promise<RealCluster> {
    const auditDir = await mkdtemp(join(tmpdir(), 'kube-real-audit-'));
    await writeFile(join(auditDir, 'policy.yaml'), AUDIT_POLICY);
    const args = [
      `--audit-policy-file=${join(auditDir, 'policy.yaml')}`,
      `--audit-log-path=${join(auditDir, 'audit.log')}`,
      ...extraArgs,
    ];
    const server = await RealApiServer.start({ extraArgs: args }).catch(async (error: unknown) => {
      await rm(auditDir, { recursive: true, force: true });
      throw error;
    });
    const cluster = new RealCluster(server, auditDir);
    try {
      await cluster.apply(...manifests);
      const established = await server.kubectl(server.admin, [
        'wait',
        '--for=condition=Established',
        'crd/machineoperations.unbounded-cloud.io',
        '--timeout=60s',
      ]);
      expect(established.status, established.stderr).toBe(0);
      expect(await waitFor(async () => (await cluster.admin('GET', OPS)).status === 200, 30_000, 200)).toBe(true);
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  async apply(...manifests: string[]): Promise<void> {
    const applied = await this.server.kubectl(this.server.admin, ['apply', ...manifests.flatMap((m) => ['-f', m])]);
    expect(applied.status, applied.stderr).toBe(0);
  }

  /** A node identity whose RBAC grant is in effect (bindings reach the authorizer through an informer). */
  async node(name: string): Promise<KubeIdentity> {
    const identity = await this.server.node(name);
    const granted = await waitFor(async () => (await this.server.request(identity, 'GET', OPS)).status === 200, 30_000);
    expect(granted).toBe(true);
    return identity;
  }

  admin(method: string, path: string, body?: unknown, contentType?: string): Promise<KubeResponse> {
    return this.server.request(this.server.admin, method, path, {
      ...(body === undefined ? {} : { body }),
      ...(contentType === undefined ? {} : { contentType }),
    });
  }

  /** Creates a MachineOperation as the admin (it must succeed) and returns it. */
  async create(
    name: string,
    spec: Record<string, unknown>,
  ): Promise<{ metadata: { uid: string; resourceVersion: string } }> {
    const body = { apiVersion: 'unbounded-cloud.io/v1alpha3', kind: 'MachineOperation', metadata: { name }, spec };
    const answer = await this.admin('POST', OPS, body);
    expect(answer.status, answer.text).toBe(201);
    return answer.json as { metadata: { uid: string; resourceVersion: string } };
  }

  async status(name: string): Promise<Record<string, unknown> | undefined> {
    const answer = await this.admin('GET', `${OPS}/${name}`);
    expect(answer.status, answer.text).toBe(200);
    return (answer.json as { status?: Record<string, unknown> }).status;
  }

  /** Every audit record so far (the log backend writes each one before the request completes). */
  async audit(): Promise<AuditEvent[]> {
    const text = await readFile(join(this.auditDir, 'audit.log'), 'utf8').catch(() => '');
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as AuditEvent);
  }

  /** The audit records of node `machine`'s requests with `verb`, in order: finished ones, started ones for watches. */
  async requestsOf(machine: string, verb: string): Promise<AuditEvent[]> {
    const stage = verb === 'watch' ? 'ResponseStarted' : 'ResponseComplete';
    return (await this.audit()).filter(
      (e) => e.user.username === `system:node:${machine}` && e.verb === verb && e.stage === stage,
    );
  }

  /** The name and uid of a stored operation, as the daemon refers to it. */
  async ref(name: string): Promise<{ name: string; uid: string }> {
    const answer = await this.admin('GET', `${OPS}/${name}`);
    expect(answer.status, answer.text).toBe(200);
    return { name, uid: (answer.json as { metadata: { uid: string } }).metadata.uid };
  }

  /**
   * Compacts etcd's history at its current revision: every older revision is gone from storage
   * (that revision itself stays readable). Returns the revision.
   */
  async compactEtcd(): Promise<number> {
    const post = async (path: string, body: object): Promise<{ header: { revision: string } }> => {
      const answer = await fetch(`${this.server.etcdUrl}${path}`, {
        method: 'POST',
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      expect(answer.ok).toBe(true);
      return (await answer.json()) as { header: { revision: string } };
    };
    const { header } = await post('/v3/kv/range', {
      key: Buffer.from('\0').toString('base64'),
      keys_only: true,
      limit: 1,
    });
    await post('/v3/kv/compaction', { revision: header.revision, physical: true });
    return Number(header.revision);
  }

  async stop(): Promise<void> {
    await this.server.stop();
    await rm(this.auditDir, { recursive: true, force: true });
  }
}

/** The query parameters of an audited request. */
export const queryOf = (event: AuditEvent): URLSearchParams => new URL(event.requestURI, 'https://api').searchParams;

/**
 * Takes items from an async iterator within a bound, leaving it running; an item that arrives
 * after a take gave up is kept for the next take rather than lost.
 */
export class Taker<T> {
  private pending: Promise<IteratorResult<T>> | null = null;

  constructor(private readonly iterator: AsyncIterator<T>) {}

  async take(count: number, timeoutMs: number): Promise<T[]> {
    const taken: T[] = [];
    const deadlineMs = Date.now() + timeoutMs;
    while (taken.length < count) {
      const remainingMs = deadlineMs - Date.now();
      if (remainingMs <= 0) break;
      this.pending ??= this.iterator.next();
      let timer: NodeJS.Timeout | undefined;
      const next = await Promise.race([
        this.pending,
        new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), remainingMs))),
      ]);
      clearTimeout(timer);
      if (next === 'timeout') break;
      this.pending = null;
      if (next.done === true) break;
      taken.push(next.value);
    }
    return taken;
  }
}

export const upgrade = (machineRef: string): Record<string, unknown> => ({
  machineRef,
  operationKind: 'AgentUpgrade',
  parameters: { downloadURL: 'https://releases.example.com/agent.tar.gz' },
});
