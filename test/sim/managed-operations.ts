import { createHash } from 'node:crypto';
import type { AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import type { AgentUpgradeRequest, OperationPhase } from '../../src/ports/node/operation-store.js';
import { releaseArchive } from '../support/archive/index.js';
import { agentScript, CANARY, digestOf, MEMBER, type ManagedWorld } from './managed-world.js';
import type { VersionLabels } from './managed-view.js';

// The upgrade operations of the managed simulation: what a test asks for, and what the
// simulation remembers of each to check its outcome.

/** How a candidate behaves: the service behaviours, or a release whose `version` command fails. */
export type Behaviour = AgentBehaviour | 'version-fails';

export interface UpgradeSpec {
  readonly name: string;
  readonly version: string;
  readonly behaviour: Behaviour;
  /** Request a digest that does not match the archive (fails before the switch). */
  readonly wrongDigest?: boolean;
}

/** One operation as the simulation tracks it. */
export interface Tracked {
  readonly spec: UpgradeSpec;
  readonly parameters: Readonly<Record<string, string>>;
  readonly uid: string;
  readonly candidateDigest: string;
  /** What current held when the operation was created: a Failed upgrade must leave it there (I12). */
  readonly previousDigest: string;
  /** The phase the cluster had at the previous step (I7 is checked when it becomes Complete). */
  lastPhase: OperationPhase | null;
}

/** The script a release of `spec` carries: the agent, or a build whose `version` fails. */
function scriptOf(spec: UpgradeSpec): string {
  return spec.behaviour === 'version-fails'
    ? `#!/bin/sh\n# broken build ${spec.version}\nexit 1\n`
    : agentScript(spec.version);
}

/**
 * Serves the release (its URL carries the canary in the query, I8), labels its digest, teaches
 * the world how the candidate behaves and creates the operation in the cluster.
 */
export function createOperation(
  world: ManagedWorld,
  versions: VersionLabels,
  spec: UpgradeSpec,
  previousDigest: string,
): Tracked {
  const script = scriptOf(spec);
  const archive = releaseArchive(MEMBER, script);
  const url = `https://releases.example/agent-${spec.version}-${spec.name}.tar.gz?sig=${CANARY}`;
  world.source.archives.set(url, archive);
  const candidateDigest = digestOf(script);
  versions.set(candidateDigest, `v${spec.version}${spec.behaviour === 'version-fails' ? '(broken)' : ''}`);
  if (spec.behaviour !== 'version-fails') world.behaviours.set(candidateDigest, spec.behaviour);
  const parameters = {
    downloadURL: url,
    sha256: spec.wrongDigest === true ? '0'.repeat(64) : createHash('sha256').update(archive).digest('hex'),
  };
  const ref = world.store.create({ name: spec.name, parameters });
  return { spec, parameters, uid: ref.uid ?? '', candidateDigest, previousDigest, lastPhase: null };
}

/** The request the watch delivers for a tracked operation (the phase is filled in when handled). */
export function requestFor(tracked: Tracked): AgentUpgradeRequest {
  return { operation: { name: tracked.spec.name, uid: tracked.uid }, phase: null, parameters: tracked.parameters };
}

/** `up1 v2.0.0 crash-on-start wrong-digest`: the trace line of a new operation. */
export function describeSpec(spec: UpgradeSpec): string {
  return `${spec.name} v${spec.version} ${spec.behaviour}${spec.wrongDigest === true ? ' wrong-digest' : ''}`;
}
