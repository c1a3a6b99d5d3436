/** Fleets, releases and specs for the rollout planner's tests. */
import type { NodeFacts, ReleaseObject } from '../../../src/domain/fleet/order/snapshot.js';
import { ANNOTATION_AGENT_VERSION, LABEL_ARCH, LABEL_ZONE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { Prng } from '../../sim/harness/index.js';

export const OLD_VERSION = '1.4.1';
export const NEW_VERSION = '1.4.2';

export interface FleetShape {
  readonly size: number;
  /** Share of arm64 machines, 0..1. */
  readonly arm64: number;
  readonly zones: number;
}

export function makeNodes(prng: Prng, shape: FleetShape): Map<string, NodeFacts> {
  const nodes = new Map<string, NodeFacts>();
  for (let index = 0; index < shape.size; index += 1) {
    const name = `node-${String(index).padStart(5, '0')}`;
    nodes.set(name, {
      name,
      uid: `uid-${index}-${prng.nextUint32().toString(16)}`,
      labels: {
        [LABEL_ARCH]: prng.chance(shape.arm64) ? 'arm64' : 'amd64',
        [LABEL_ZONE]: `zone-${prng.int(shape.zones) + 1}`,
        'node-role.kubernetes.io/agent': '',
      },
      annotations: { [ANNOTATION_AGENT_VERSION]: OLD_VERSION },
    });
  }
  return nodes;
}

export function makeRelease(name: string, version: string, uid = `uid-${name}`): ReleaseObject {
  const digest = (arch: string): string => (arch === 'amd64' ? 'a' : 'b').repeat(64);
  return {
    name,
    uid,
    generation: 1,
    resourceVersion: '1',
    spec: {
      version,
      artifacts: ['amd64', 'arm64'].map((arch) => ({
        arch,
        downloadURL: `https://releases.example.com/agent/${version}/agent-${arch}.tar.gz`,
        sha256: digest(arch),
      })),
    },
    status: {},
  };
}

export function releases(): Map<string, ReleaseObject> {
  return new Map([
    ['agent-1.4.2', makeRelease('agent-1.4.2', NEW_VERSION)],
    ['agent-1.4.1', makeRelease('agent-1.4.1', OLD_VERSION)],
  ]);
}

/** A spec with defaults a test overrides piece by piece. */
export function baseSpec(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    releaseRef: { name: 'agent-1.4.2' },
    targets: { selector: { matchLabels: { 'node-role.kubernetes.io/agent': '' } } },
    state: 'Run',
    strategy: {
      waves: [
        { name: 'canary', count: 2, maxInFlight: 2, gate: 'Auto' },
        { name: 'early', percent: 20, maxInFlight: 5 },
        { name: 'rest', percent: 100, maxInFlight: '25%' },
      ],
      operationTimeout: '10m',
      onFailure: 'Halt',
      quarantineOnHalt: true,
    },
    rollback: { releaseRef: { name: 'agent-1.4.1' }, maxInFlight: '50%', failureBudget: 1 },
    ...overrides,
  };
}

export function seeded(seed: number): Prng {
  return new Prng(seed);
}
