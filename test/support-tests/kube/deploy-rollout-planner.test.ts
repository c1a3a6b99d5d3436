// The rollout planner and the CRD schemas in deploy/: the examples accepted by the planner, and
// the planner's own statuses accepted by the rollout CRD's status schema.

import { describe, expect, it } from 'vitest';
import { parseRolloutSpec } from '../../../src/domain/fleet/spec/parse-rollout-spec.js';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { parseReleaseSpec } from '../../../src/domain/fleet/spec/release-spec.js';
import type { NodeFacts, ReleaseObject } from '../../../src/domain/fleet/order/snapshot.js';
import { Prng } from '../../sim/harness/index.js';
import { randomScenario } from '../../domain/rollout/scenarios.js';
import { runRollout } from '../../domain/rollout/run-rollout.js';
import { withDefaults, type Json } from './crd-schema.js';
import { check, type Doc, releaseExamples, ROLLOUT, rolloutExample } from './rollout-manifests.js';

describe('the planner and the schemas', () => {
  const releases = new Map<string, ReleaseObject>(
    releaseExamples.map((doc) => [
      doc['metadata'].name,
      {
        name: doc['metadata'].name,
        uid: `uid-${doc['metadata'].name}`,
        generation: 1,
        resourceVersion: '1',
        spec: doc['spec'],
        status: {},
      },
    ]),
  );

  it('accept the examples as they are stored (with the defaults)', () => {
    for (const doc of releaseExamples) expect(parseReleaseSpec(doc['spec']).ok).toBe(true);
    const stored = withDefaults(rolloutExample as Json, ROLLOUT) as Doc;
    expect(parseRolloutSpec(stored['spec'])).toEqual(parseRolloutSpec(rolloutExample['spec']));
    expect(parseRolloutSpec(stored['spec']).ok).toBe(true);
  });

  const agentNodes = (count: number): NodeFacts[] =>
    Array.from({ length: count }, (_, index) => ({
      name: `node-${index}`,
      uid: `uid-${index}`,
      labels: {
        'node-role.kubernetes.io/agent': '',
        'kubernetes.io/arch': index % 5 === 0 ? 'arm64' : 'amd64',
        'topology.kubernetes.io/zone': `zone-${index % 3}`,
      },
      annotations: {},
    }));
  const previewExample = (nodes: NodeFacts[]) => {
    const stored = withDefaults(rolloutExample as Json, ROLLOUT) as Doc;
    const rollout = { name: stored['metadata'].name, uid: 'uid', generation: 1, resourceVersion: '1', annotations: {} };
    return {
      stored,
      plan: planRollout(
        {
          rollout: { ...rollout, spec: stored['spec'], status: {} },
          release: releases.get(stored['spec'].releaseRef.name) ?? null,
          rollbackRelease: releases.get(stored['spec'].rollback.releaseRef.name) ?? null,
          nodes,
          children: [],
          foreignOperations: [],
        },
        Date.UTC(2025, 0, 6, 9, 0, 0),
      ),
    };
  };

  it('preview the example on 300 nodes: waves, diverse canaries, nothing created', () => {
    const nodes = agentNodes(300);
    const { stored, plan } = previewExample(nodes);
    expect(plan.actions.map((action) => action.kind)).toEqual(['UpdateRolloutStatus', 'RecordEvent']);
    expect(plan.status.phase).toBe('Preview');
    expect(plan.status.waves.map((wave) => wave.size)).toEqual([3, 27, 120, 150]);
    const archs = new Set(
      plan.status.preview?.canaries.map(
        (name) => nodes.find((node) => node.name === name)?.labels['kubernetes.io/arch'],
      ),
    );
    expect(archs).toEqual(new Set(['amd64', 'arm64']));
    expect(check({ ...stored, status: plan.status }, ROLLOUT)).toEqual([]);
  });

  it('preview the example on 8 nodes: no wave is empty (10% after 1% still reaches one more)', () => {
    expect(previewExample(agentNodes(8)).plan.status.waves.map((wave) => wave.size)).toEqual([1, 1, 2, 4]);
    expect(previewExample(agentNodes(2)).plan.status.waves.map((wave) => wave.size)).toEqual([1, 1, 0, 0]);
  });

  it("write only statuses the rollout CRD's status schema accepts, whatever happens", () => {
    let checked = 0;
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      const { world, description } = randomScenario(
        seed,
        new Prng(seed),
        ['many', 'everywhere', 'arm64', 'hangs', 'invalid'],
        300,
      );
      runRollout(world, {
        maxSteps: 3000,
        approve: true,
        check: (at) => {
          const problems = check(
            {
              apiVersion: 'agent-upgrade.dev/v1alpha1',
              kind: 'AgentRollout',
              metadata: { name: at.name },
              spec: at.spec,
              status: at.status as Doc,
            },
            ROLLOUT,
          );
          expect(problems, `${description}, step ${at.step}`).toEqual([]);
          checked += 1;
        },
      });
    }
    expect(checked).toBeGreaterThan(50);
  });
});
