// Cross-checks the fake with a second, independent client: kubectl (v1.32 on the image). kubectl
// runs as a child process, so it must be spawned asynchronously — a synchronous spawn would block
// the very event loop the in-process fake answers on.

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeApiServer, startFakeApiServer } from '../../support/kube/fake-apiserver.js';

const KUBECTL = '/usr/bin/kubectl';
const DEPLOY = join(import.meta.dirname, '../../../deploy');
/** The daemon's manifests (other components' manifests in deploy/ have tests of their own). */
const DAEMON_MANIFESTS = [
  'machineoperation-crd.yaml',
  'machineoperation-crd-pre-1.30.yaml',
  'agent-upgrade-rbac.yaml',
  'agent-upgrade-admission-policy.yaml',
];

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let scratch: string;

function kubectl(server: FakeApiServer, args: readonly string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      [`--server=${server.origin}`, `--cache-dir=${join(scratch, 'cache')}`, '--request-timeout=10s', ...args],
      // No kubeconfig of the machine's may leak in, and nothing may be written under $HOME.
      {
        env: { PATH: process.env['PATH'] ?? '', HOME: scratch, KUBECONFIG: join(scratch, 'kubeconfig') },
        timeout: 20_000,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'fake-apiserver-kubectl-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe('fake API server seen by kubectl', () => {
  let server: FakeApiServer;
  beforeEach(async () => {
    server = await startFakeApiServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it('get --raw returns the same list as the fake holds', async () => {
    server.create({ metadata: { name: 'op-b' }, spec: { machineRef: 'node-2', operationKind: 'AgentUpgrade' } });
    server.create({ metadata: { name: 'op-a' }, spec: { machineRef: 'node-1', operationKind: 'AgentUpgrade' } });

    const run = await kubectl(server, ['get', '--raw', '/apis/unbounded-cloud.io/v1alpha3/machineoperations']);

    expect(run.code, run.stderr).toBe(0);
    const list: unknown = JSON.parse(run.stdout);
    expect(list).toEqual({
      apiVersion: 'unbounded-cloud.io/v1alpha3',
      kind: 'MachineOperationList',
      metadata: { resourceVersion: server.resourceVersion() },
      items: [server.get('op-a'), server.get('op-b')],
    });
  });

  it('get --raw of a discovery document round-trips', async () => {
    const run = await kubectl(server, ['get', '--raw', '/apis/unbounded-cloud.io/v1alpha3']);
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as {
      groupVersion: string;
      resources: { name: string; shortNames?: string[] }[];
    };
    expect(doc.groupVersion).toBe('unbounded-cloud.io/v1alpha3');
    expect(doc.resources.map((r) => r.name)).toEqual(['machineoperations', 'machineoperations/status']);
    expect(doc.resources[0]?.shortNames).toEqual(['mop']);
  });

  it("create --dry-run=client maps every one of the daemon's manifests in deploy/ through discovery", async () => {
    const files = DAEMON_MANIFESTS.flatMap((file) => ['-f', join(DEPLOY, file)]);
    const run = await kubectl(server, ['create', '--dry-run=client', '--validate=false', '-o', 'name', ...files]);

    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n').sort()).toEqual([
      'clusterrole.rbac.authorization.k8s.io/agent-upgrade-daemon',
      'clusterrolebinding.rbac.authorization.k8s.io/agent-upgrade-daemon',
      'customresourcedefinition.apiextensions.k8s.io/machineoperations.unbounded-cloud.io',
      'customresourcedefinition.apiextensions.k8s.io/machineoperations.unbounded-cloud.io',
      'validatingadmissionpolicy.admissionregistration.k8s.io/agent-upgrade-node-status',
      'validatingadmissionpolicybinding.admissionregistration.k8s.io/agent-upgrade-node-status',
    ]);
    // Client-side dry run must not write anything, and kubectl found its way through discovery.
    expect(server.requestCount({ method: 'POST' })).toBe(0);
    expect(server.requestCount({ path: /^\/apis$/ })).toBeGreaterThan(0);
  });

  it('get mop by short name lists the operations through discovery', async () => {
    server.create({ metadata: { name: 'op-a' }, spec: { machineRef: 'node-1', operationKind: 'AgentUpgrade' } });
    const run = await kubectl(server, ['get', 'mop', '-o', 'name']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('machineoperation.unbounded-cloud.io/op-a');
  });

  it('get of a missing operation exits non-zero with NotFound', async () => {
    const run = await kubectl(server, ['get', '--raw', '/apis/unbounded-cloud.io/v1alpha3/machineoperations/absent']);
    expect(run.code).not.toBe(0);
    const last = server.requests.at(-1);
    expect(last?.path).toBe('/apis/unbounded-cloud.io/v1alpha3/machineoperations/absent');
  });
});
