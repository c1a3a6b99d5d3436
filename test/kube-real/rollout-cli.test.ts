/**
 * `agent-upgrade rollout …` against a real kube-apiserver with the shipped AgentRelease and
 * AgentRollout CRDs and the example release and rollout of deploy/examples/, run as the admin:
 * the spec each command leaves, the halt resumed with its id, idempotent repeats that write
 * nothing, and every transition the CRD's CEL rules refuse refused by the CLI before any request
 * is sent (the object's resourceVersion unchanged, no PATCH made), while the API server itself
 * refuses the same change.
 */
import { readFile } from 'node:fs/promises';
import { load } from 'js-yaml';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubernetesRolloutStore } from '../../src/adapters/fleet/kubernetes/kubernetes-rollout-store.js';
import { ROLLOUTS_PATH as AGENT_ROLLOUTS_PATH } from '../../src/adapters/fleet/kubernetes/resource-paths.js';
import type { RolloutStore } from '../../src/ports/fleet/rollout-store.js';
import { CRD, MERGE_PATCH, RealCluster } from '../support/kube/real-cluster.js';
import { runCliInMemory } from '../support/run-cli.js';
import { waitFor } from '../support/wait-for.js';

const REPO = resolve(import.meta.dirname, '../..');
const RELEASE_CRD = join(REPO, 'deploy/agentrelease-crd.yaml');
const ROLLOUT_CRD = join(REPO, 'deploy/agentrollout-crd.yaml');
const RELEASES = join(REPO, 'deploy/examples/agent-release.yaml');
const ROLLOUT = join(REPO, 'deploy/examples/agent-rollout.yaml');
const CONTROLLER_RBAC = join(REPO, 'deploy/agent-upgrade-controller-rbac.yaml');
const CONTROLLER_DEPLOYMENT = join(REPO, 'deploy/agent-upgrade-controller.yaml');
const NAME = 'fleet-v1-4-2';
const HALT_ID = 'early-e67b10ca';

let cluster: RealCluster;
/** The admin kubeconfig, and its context named explicitly as an operator would with `--context`. */
let clusterFlags: string[];

interface Stored {
  readonly metadata: { readonly resourceVersion: string };
  readonly spec: { readonly state?: string; readonly resumeFromHalt?: string };
}

async function stored(name = NAME): Promise<Stored> {
  const answer = await cluster.admin('GET', `${AGENT_ROLLOUTS_PATH}/${name}`);
  expect(answer.status, answer.text).toBe(200);
  return answer.json as Stored;
}

async function rollout(argv: readonly string[], rolloutStore?: RolloutStore) {
  const run = await runCliInMemory(['rollout', ...argv, ...clusterFlags, '--json'], {
    ...(rolloutStore === undefined ? {} : { rolloutStore }),
  });
  const document = JSON.parse(run.stdout) as { error?: { code: string }; rollout?: Record<string, unknown> };
  return { exitCode: run.exitCode, code: document.error?.code ?? null, rollout: document.rollout, stderr: run.stderr };
}

/** The real adapter as the admin, recording every write it is asked to make. */
async function recordingStore(): Promise<{ store: RolloutStore; writes: unknown[] }> {
  const real = await KubernetesRolloutStore.connect(cluster.server.admin.kubeconfigPath);
  const writes: unknown[] = [];
  return {
    writes,
    store: {
      get: (name) => real.get(name),
      list: () => real.list(),
      getRelease: (name) => real.getRelease(name),
      patchSpec: (name, resourceVersion, patch) => {
        writes.push({ name, resourceVersion, patch });
        return real.patchSpec(name, resourceVersion, patch);
      },
      annotate: (name, resourceVersion, annotations) => {
        writes.push({ name, resourceVersion, annotations });
        return real.annotate(name, resourceVersion, annotations);
      },
      quarantineRelease: (name, resourceVersion, quarantine) => {
        writes.push({ name, resourceVersion, quarantine });
        return real.quarantineRelease(name, resourceVersion, quarantine);
      },
      close: () => real.close(),
    },
  };
}

async function setState(state: string): Promise<void> {
  const answer = await cluster.admin('PATCH', `${AGENT_ROLLOUTS_PATH}/${NAME}`, { spec: { state } }, MERGE_PATCH);
  expect(answer.status, answer.text).toBe(200);
}

beforeAll(async () => {
  cluster = await RealCluster.start([CRD, RELEASE_CRD, ROLLOUT_CRD]);
  for (const crd of ['agentreleases', 'agentrollouts']) {
    const established = await cluster.server.kubectl(cluster.server.admin, [
      'wait',
      '--for=condition=Established',
      `crd/${crd}.agent-upgrade.dev`,
      '--timeout=60s',
    ]);
    expect(established.status, established.stderr).toBe(0);
  }
  expect(await waitFor(async () => (await cluster.admin('GET', AGENT_ROLLOUTS_PATH)).status === 200, 30_000, 200)).toBe(
    true,
  );
  await cluster.apply(RELEASES, ROLLOUT);
  const kubeconfig = cluster.server.admin.kubeconfigPath;
  const context = (load(await readFile(kubeconfig, 'utf8')) as { 'current-context'?: string })['current-context'];
  if (context === undefined) throw new Error(`${kubeconfig} names no current context`);
  clusterFlags = ['--kubeconfig', kubeconfig, '--context', context];
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
}, 30_000);

describe('agent-upgrade rollout on a real API server', () => {
  it('status reads the example rollout: Preview, no status yet (no controller runs here)', async () => {
    expect(await rollout(['status', NAME])).toMatchObject({
      exitCode: 0,
      rollout: { name: NAME, release: 'aks-flex-node-v1.4.2', state: 'Preview', phase: null, status: null },
    });
    expect(await rollout(['status', 'no-such-rollout'])).toMatchObject({ exitCode: 1, code: 'E_NOT_FOUND' });
  });

  it('resume, pause, resume: the spec each leaves; a repeat is unchanged and writes nothing', async () => {
    expect(await rollout(['resume', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: true } });
    expect((await stored()).spec.state).toBe('Run');
    expect(await rollout(['pause', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: true } });
    const paused = await stored();
    expect(paused.spec.state).toBe('Pause');
    expect(await rollout(['pause', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: false } });
    expect((await stored()).metadata.resourceVersion).toBe(paused.metadata.resourceVersion);
    expect(await rollout(['resume', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: true } });
    expect((await stored()).spec.state).toBe('Run');
  });

  it('resume of a Halted rollout sets spec.resumeFromHalt to status.halt.id', async () => {
    const halted = {
      status: {
        observedGeneration: 2,
        phase: 'Halted',
        progress: '15/400',
        currentWave: 'early',
        halt: {
          id: HALT_ID,
          reason: 'FailureBudgetExceeded',
          wave: 'early',
          at: '2025-03-03T08:42:00Z',
          message: 'wave early: 1 failure(s), the budget allows 0',
        },
      },
    };
    const written = await cluster.admin('PATCH', `${AGENT_ROLLOUTS_PATH}/${NAME}/status`, halted, MERGE_PATCH);
    expect(written.status, written.text).toBe(200);
    expect(await rollout(['status', NAME])).toMatchObject({ exitCode: 0, rollout: { phase: 'Halted' } });
    expect(await rollout(['resume', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: true } });
    expect((await stored()).spec).toMatchObject({ state: 'Run', resumeFromHalt: HALT_ID });
    const resumed = (await stored()).metadata.resourceVersion;
    expect(await rollout(['resume', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: false } });
    expect((await stored()).metadata.resourceVersion).toBe(resumed);
  });

  it('list, approve of a manual gate, and a release quarantined then lifted, on the real server', async () => {
    const listed = await runCliInMemory(['rollout', 'list', ...clusterFlags, '-o', 'json']);
    expect((JSON.parse(listed.stdout) as { rollouts: { name: string }[] }).rollouts.map((r) => r.name)).toEqual([NAME]);
    const awaiting = {
      status: { observedGeneration: 4, phase: 'AwaitingApproval', currentWave: 'canary', halt: null },
    };
    const written = await cluster.admin('PATCH', `${AGENT_ROLLOUTS_PATH}/${NAME}/status`, awaiting, MERGE_PATCH);
    expect(written.status, written.text).toBe(200);
    const approved = await runCliInMemory(['rollout', 'approve', NAME, ...clusterFlags, '--json']);
    expect(approved.exitCode, approved.stdout).toBe(0);
    const annotations = (await cluster.admin('GET', `${AGENT_ROLLOUTS_PATH}/${NAME}`)).json as {
      metadata: { annotations?: Record<string, string> };
    };
    expect(annotations.metadata.annotations?.['agent-upgrade.dev/approve-wave']).toBe('canary');
    const release = async () =>
      (
        (await cluster.admin('GET', `/apis/agent-upgrade.dev/v1alpha1/agentreleases/aks-flex-node-v1.4.2`)).json as {
          spec: { quarantine?: unknown };
        }
      ).spec.quarantine;
    const release0 = ['release', 'quarantine', 'aks-flex-node-v1.4.2', ...clusterFlags, '--json'];
    expect((await runCliInMemory([...release0, '--reason', 'arm64 kubelet restarts'])).exitCode).toBe(0);
    expect(await release()).toEqual({ quarantined: true, reason: 'arm64 kubelet restarts' });
    const lift = ['release', 'unquarantine', 'aks-flex-node-v1.4.2', ...clusterFlags, '--json'];
    expect((await runCliInMemory(lift)).exitCode).toBe(0);
    expect(await release()).toEqual({ quarantined: false, reason: '' });
  });

  it('a stale resourceVersion is a conflict on the real server, not a write', async () => {
    const store = await KubernetesRolloutStore.connect(cluster.server.admin.kubeconfigPath);
    const read = await store.get(NAME);
    expect(read).not.toBeNull();
    await setState('Pause');
    expect(await store.patchSpec(NAME, read?.resourceVersion ?? '', { state: 'Abort' })).toEqual({ kind: 'conflict' });
    expect((await stored()).spec.state).toBe('Pause');
    store.close();
  });

  it('abort, then every transition CEL refuses is refused first (exit 2), with no request that changes it', async () => {
    expect(await rollout(['abort', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: true } });
    const aborted = await stored();
    expect(aborted.spec.state).toBe('Abort');
    for (const command of ['resume', 'pause']) {
      const { store, writes } = await recordingStore();
      expect(await rollout([command, NAME], store)).toMatchObject({ exitCode: 2, code: 'E_TRANSITION_REFUSED' });
      expect(writes).toEqual([]);
    }
    expect((await stored()).metadata.resourceVersion).toBe(aborted.metadata.resourceVersion);
    // The API server refuses the same change itself (the CLI only said so first).
    const direct = await cluster.admin(
      'PATCH',
      `${AGENT_ROLLOUTS_PATH}/${NAME}`,
      { spec: { state: 'Run' } },
      MERGE_PATCH,
    );
    expect(direct.status).toBe(422);
  });

  it('rollback of the aborted rollout, then only abort is allowed', async () => {
    expect(await rollout(['rollback', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: true } });
    const rollingBack = await stored();
    expect(rollingBack.spec.state).toBe('RollBack');
    const { store, writes } = await recordingStore();
    expect(await rollout(['pause', NAME], store)).toMatchObject({ exitCode: 2, code: 'E_TRANSITION_REFUSED' });
    expect(writes).toEqual([]);
    expect((await stored()).metadata.resourceVersion).toBe(rollingBack.metadata.resourceVersion);
    expect(await rollout(['abort', NAME])).toMatchObject({ exitCode: 0, rollout: { changed: true } });
    expect((await stored()).spec.state).toBe('Abort');
  });

  it('rollback of a rollout without spec.rollback is E_NO_ROLLBACK_RELEASE, refused before sending', async () => {
    const example = await stored();
    const body = {
      apiVersion: 'agent-upgrade.dev/v1alpha1',
      kind: 'AgentRollout',
      metadata: { name: 'no-rollback' },
      spec: { ...(example as unknown as { spec: Record<string, unknown> }).spec, state: 'Run', rollback: undefined },
    };
    const created = await cluster.admin('POST', AGENT_ROLLOUTS_PATH, JSON.parse(JSON.stringify(body)));
    expect(created.status, created.text).toBe(201);
    const before = await stored('no-rollback');
    const { store, writes } = await recordingStore();
    expect(await rollout(['rollback', 'no-rollback'], store)).toMatchObject({
      exitCode: 2,
      code: 'E_NO_ROLLBACK_RELEASE',
    });
    expect(writes).toEqual([]);
    expect((await stored('no-rollback')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    const direct = await cluster.admin(
      'PATCH',
      `${AGENT_ROLLOUTS_PATH}/no-rollback`,
      { spec: { state: 'RollBack' } },
      MERGE_PATCH,
    );
    expect(direct.status).toBe(422);
  });

  it('the controller manifests are accepted by the server: its RBAC applied, its Deployment on a server-side dry run', async () => {
    const rbac = await cluster.server.kubectl(cluster.server.admin, ['apply', '-f', CONTROLLER_RBAC]);
    expect(rbac.status, rbac.stderr).toBe(0);
    const deployment = await cluster.server.kubectl(cluster.server.admin, [
      'apply',
      '--dry-run=server',
      '-f',
      CONTROLLER_DEPLOYMENT,
    ]);
    expect(deployment.status, deployment.stderr).toBe(0);
  });
});
