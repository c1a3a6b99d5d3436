// One real cluster set up for fleet rollouts: the shipped CRDs (MachineOperation, AgentRelease,
// AgentRollout), the daemon's RBAC and admission policy, the controller's RBAC; the releases'
// archives on a loopback server; a fleet of real daemons (rollout-fleet.ts) on v1; and two real
// controller replicas (rollout-controllers.ts) authenticating as the shipped ServiceAccount.

import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildTestAgent } from '../agent/build-agent.js';
import { assertBuildCurrent } from '../systemd/systemd-host.js';
import { waitFor } from '../wait-for.js';
import { serviceAccountKubeconfig } from './real-apiserver-accounts.js';
import { CRD, POLICY, RBAC, RealCluster } from './real-cluster.js';
import { CONTROLLER_ACCOUNT, CONTROLLER_NAMESPACE, ControllerReplica } from './rollout-controllers.js';
import { agentVersions, createObject, RELEASES, ROLLOUTS } from './rollout-evidence.js';
import { createNodes, RolloutFleet, sha256, type MachineSpec } from './rollout-fleet.js';
import { plainRolloutReleases, signedRolloutReleases, type RolloutReleaseHost } from './rollout-release-host.js';

const REPO = resolve(import.meta.dirname, '../../..');
const RELEASE_CRD = join(REPO, 'deploy/agentrelease-crd.yaml');
const ROLLOUT_CRD = join(REPO, 'deploy/agentrollout-crd.yaml');
const CONTROLLER_RBAC = join(REPO, 'deploy/agent-upgrade-controller-rbac.yaml');

/** A release to publish: its version, and whether its arm64 artifact is an agent that exits at start. */
export interface ReleasePlan {
  readonly name: string;
  readonly version: string;
  readonly arm64CrashesOnStart?: boolean;
}

export interface RolloutWorld {
  readonly cluster: RealCluster;
  readonly fleet: RolloutFleet;
  readonly replicas: readonly ControllerReplica[];
  /** SHA-256 of each healthy agent build, by version. */
  readonly digests: Readonly<Record<string, string>>;
  /** Where the releases are served (a signed world can swap an artifact there). */
  readonly releases: RolloutReleaseHost;
  /** Compiles a further release's agent and creates its AgentRelease. */
  publish(plan: ReleasePlan): Promise<void>;
  stop(): Promise<void>;
}

export interface RolloutWorldOptions {
  /** Releases from a go-tuf repository the daemons and the controllers trust. */
  readonly signed?: boolean;
  /** The controller replicas' identities: two by default, for leader election. */
  readonly replicas?: readonly string[];
}

/**
 * Starts everything; the machines run the first release's agent and have reported its version on
 * their Nodes before the controllers start. What started is stopped again when a later step fails.
 */
export async function startRolloutWorld(
  machines: readonly MachineSpec[],
  plans: readonly ReleasePlan[],
  options: RolloutWorldOptions = {},
): Promise<RolloutWorld> {
  // Every daemon and controller is the built CLI: refuse a stale dist/ before starting anything.
  assertBuildCurrent();
  const parts: { cluster?: RealCluster; releases?: RolloutReleaseHost; fleet?: RolloutFleet; dir?: string } = {};
  const replicas: ControllerReplica[] = [];
  const stop = async (): Promise<void> => {
    // Each step runs whatever failed before it: no process may outlive the test file.
    await Promise.allSettled(replicas.map((replica) => replica.stop()));
    await parts.fleet?.stop().catch(() => undefined);
    await parts.releases?.close().catch(() => undefined);
    await parts.cluster?.stop().catch(() => undefined);
    if (parts.dir !== undefined) await rm(parts.dir, { recursive: true, force: true });
  };
  try {
    const cluster = (parts.cluster = await startCluster());
    parts.dir = await mkdtemp(join(tmpdir(), 'rollout-world-'));
    const releases = (parts.releases = await (
      options.signed === true ? signedRolloutReleases : plainRolloutReleases
    )());
    const agentsDir = join(parts.dir, 'agents');
    const digests: Record<string, string> = {};
    const publish = async (plan: ReleasePlan) => {
      const { digest, agent } = await publishRelease(cluster, releases, agentsDir, plan);
      digests[plan.version] = digest;
      return agent;
    };
    let initialAgent = '';
    for (const plan of plans) {
      const agent = await publish(plan);
      initialAgent ||= agent;
    }
    await createNodes(cluster, machines);
    const fleet = (parts.fleet = await RolloutFleet.start(cluster, machines, initialAgent, 3, releases.machines));
    const first = plans[0]?.version;
    // Each daemon reports its agent's version on its own Node once its startup gate opened.
    const reported = async () => Object.values(await agentVersions(cluster)).every((version) => version === first);
    if (!(await waitFor(reported, 120_000, 500))) throw new Error(`not every machine reported ${first}`);
    const kubeconfig = join(parts.dir, 'controller.kubeconfig');
    await serviceAccountKubeconfig(cluster.server, CONTROLLER_NAMESPACE, CONTROLLER_ACCOUNT, kubeconfig);
    for (const identity of options.replicas ?? ['a', 'b']) {
      const extraArgs = releases.controllerArgs(join(parts.dir, `controller-${identity}`));
      replicas.push(await ControllerReplica.start(identity, kubeconfig, fleet.logDir, extraArgs));
    }
    return { cluster, fleet, replicas, digests, releases, publish: async (plan) => void (await publish(plan)), stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function startCluster(): Promise<RealCluster> {
  const cluster = await RealCluster.start([CRD, RBAC, POLICY, RELEASE_CRD, ROLLOUT_CRD, CONTROLLER_RBAC]);
  try {
    for (const crd of ['agentreleases', 'agentrollouts']) {
      const args = ['wait', '--for=condition=Established', `crd/${crd}.agent-upgrade.dev`, '--timeout=60s'];
      const established = await cluster.server.kubectl(cluster.server.admin, args);
      if (established.status !== 0) throw new Error(`${crd} not established: ${established.stderr}`);
    }
    if (!(await waitFor(async () => (await cluster.admin('GET', ROLLOUTS)).status === 200, 30_000, 200)))
      throw new Error('AgentRollouts are not served');
    return cluster;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
}

/** Compiles a release's agent, serves its archives and creates its AgentRelease. */
async function publishRelease(
  cluster: RealCluster,
  releases: RolloutReleaseHost,
  agentsDir: string,
  plan: ReleasePlan,
): Promise<{ digest: string; agent: string }> {
  const healthy = buildTestAgent(agentsDir, { version: plan.version });
  const bytes = readFileSync(healthy);
  const arm64 =
    plan.arm64CrashesOnStart === true
      ? readFileSync(buildTestAgent(agentsDir, { version: plan.version, behaviour: 'crash-on-start' }))
      : bytes;
  await createObject(cluster, RELEASES, releases.release(plan.name, plan.version, { amd64: bytes, arm64 }));
  return { digest: sha256(bytes), agent: healthy };
}
