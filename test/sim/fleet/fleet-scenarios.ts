/** Fleets, releases and rollouts for the fleet simulation. */
import { RELEASES_PATH, ROLLOUTS_PATH } from '../../../src/adapters/fleet/kubernetes/resource-paths.js';
import { Prng } from '../harness/index.js';
import type { DaemonOutcome, FleetMachine } from './fleet-daemons.js';
import type { FleetWorld } from './fleet-world.js';

export const OLD_VERSION = '1.4.1';
export const NEW_VERSION = '1.4.2';
export const NEW_RELEASE = 'agent-v1.4.2';
export const OLD_RELEASE = 'agent-v1.4.1';
const ZONES = ['westeurope-1', 'westeurope-2', 'westeurope-3'];
export const BAD_INSTANCE_TYPE = 'Standard_L8s_v3';

export function fleetOf(size: number, seed: number, arm64Share = 0.25): FleetMachine[] {
  const prng = new Prng(seed);
  return Array.from({ length: size }, (_, index) => ({
    name: `node-${String(index).padStart(5, '0')}`,
    labels: {
      'kubernetes.io/arch': prng.chance(arm64Share) ? 'arm64' : 'amd64',
      'topology.kubernetes.io/zone': ZONES[prng.int(ZONES.length)] as string,
      // One machine in thirty is of a type the bad release fails on.
      'node.kubernetes.io/instance-type': prng.chance(1 / 30) ? BAD_INSTANCE_TYPE : 'Standard_D4s_v5',
      'node-role.kubernetes.io/agent': '',
    },
    version: OLD_VERSION,
    vanished: false,
  }));
}

const digest = (version: string, arch: string): string =>
  `${version.replaceAll('.', '')}${arch === 'amd64' ? 'a' : 'b'}`.padEnd(64, '0');

export function downloadUrl(version: string, arch: string): string {
  return `https://releases.example.com/agent/v${version}/agent-linux-${arch}.tar.gz`;
}

export function versionOfUrl(url: string): string {
  return /\/v(\d+\.\d+\.\d+)\//.exec(url)?.[1] ?? '';
}

export function releaseManifest(name: string, version: string): object {
  return {
    apiVersion: 'agent-upgrade.dev/v1alpha1',
    kind: 'AgentRelease',
    metadata: { name },
    spec: {
      version,
      artifacts: ['amd64', 'arm64'].map((arch) => ({
        arch,
        downloadURL: downloadUrl(version, arch),
        sha256: digest(version, arch),
      })),
    },
  };
}

export function rolloutManifest(name: string, spec: Record<string, unknown>): object {
  return { apiVersion: 'agent-upgrade.dev/v1alpha1', kind: 'AgentRollout', metadata: { name }, spec };
}

/** The example's shape, for a large fleet: a small diverse canary, then 10%, 50%, all. */
export function fleetSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    releaseRef: { name: NEW_RELEASE },
    targets: { selector: { matchLabels: { 'node-role.kubernetes.io/agent': '' } } },
    state: 'Run',
    strategy: {
      waves: [
        { name: 'canary', count: 20, maxInFlight: 20, failureBudget: 0, bake: '10m' },
        { name: 'early', percent: 10, maxInFlight: '10%', failureBudget: '1%', bake: '5m' },
        { name: 'half', percent: 50, maxInFlight: '10%', failureBudget: '1%' },
        { name: 'rest', percent: 100, maxInFlight: '10%', failureBudget: '1%' },
      ],
      maxUnavailable: '10%',
      operationTimeout: '30m',
      onFailure: 'Halt',
      quarantineOnHalt: true,
    },
    rollback: { releaseRef: { name: OLD_RELEASE }, maxInFlight: '10%', failureBudget: '2%' },
    ...overrides,
  };
}

export async function createReleases(world: FleetWorld): Promise<void> {
  await world.create(RELEASES_PATH, releaseManifest(NEW_RELEASE, NEW_VERSION));
  await world.create(RELEASES_PATH, releaseManifest(OLD_RELEASE, OLD_VERSION));
}

export async function createRollout(world: FleetWorld, name: string, spec: Record<string, unknown>): Promise<void> {
  await world.create(ROLLOUTS_PATH, rolloutManifest(name, spec));
}

/** Failures keyed on the machine's labels and the version it is asked to take. */
export type FailureMode = 'none' | 'everywhere' | 'arm64' | 'instance-type';

export function behaviourOf(mode: FailureMode): (machine: FleetMachine, target: string) => DaemonOutcome {
  return (machine, target) => {
    if (target !== NEW_VERSION || mode === 'none') return 'Succeeded';
    if (mode === 'everywhere') return 'DaemonFailed';
    if (mode === 'arm64') return machine.labels['kubernetes.io/arch'] === 'arm64' ? 'DaemonFailed' : 'Succeeded';
    return machine.labels['node.kubernetes.io/instance-type'] === BAD_INSTANCE_TYPE ? 'ExecutionFailed' : 'Succeeded';
  };
}

export const TIMINGS = { claimMs: 5_000, upgradeMs: [45_000, 60_000, 75_000, 90_000], tickMs: 5_000 } as const;
