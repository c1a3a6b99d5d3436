/** Machines other rollouts hold before the caches show their operations: the claims a plan must respect. */
import { describe, expect, it } from 'vitest';
import { claimsElsewhere } from '../../../src/app/fleet/controller/claims-elsewhere.js';
import { childNameFor, rollbackChildNameFor } from '../../../src/domain/fleet/order/fleet.js';
import { exampleNodes } from '../../domain/rollout/example-cluster.js';
import { rolloutObject } from './controller-fixtures.js';

const NODES = [...exampleNodes(4).values()];
const [first, second, third] = NODES.map((node) => node.name) as [string, string, string];

const statusAnnouncing = (forward: readonly string[], rollback: readonly string[] = []): unknown => ({
  phase: 'Progressing',
  waves: [
    {
      name: 'all',
      phase: 'Progressing',
      size: 4,
      cursor: 2,
      pendingCreates: forward,
      failureBudget: { allowed: 0, used: 0 },
    },
  ],
  ...(rollback.length > 0 && {
    rollback: {
      scope: 'All',
      phase: 'Progressing',
      size: 1,
      cursor: 1,
      pendingCreates: rollback,
      failureBudget: { allowed: 0, used: 0 },
      inFlight: 0,
      rolledBack: 0,
      failed: 0,
      timedOut: 0,
      lost: 0,
      noArtifact: 0,
      startedAt: '2025-01-06T12:00:00Z',
    },
  }),
});

describe('claimsElsewhere', () => {
  it("names the machines announced in another rollout's pendingCreates, forward and rollback, as live", () => {
    const other = rolloutObject('other');
    const status = statusAnnouncing([childNameFor('other', first)], [rollbackChildNameFor('other', second)]);
    const claims = claimsElsewhere('fleet', [{ object: other, status }], NODES, new Map());
    expect(claims.map((claim) => [claim.machineRef, claim.phase]).sort()).toEqual([
      [first, 'Pending'],
      [second, 'Pending'],
    ]);
  });

  it("ignores the rollout's own announcements, and announcements naming machines that are not Nodes", () => {
    const own = rolloutObject('fleet');
    const other = rolloutObject('other');
    const claims = claimsElsewhere(
      'fleet',
      [
        { object: own, status: statusAnnouncing([childNameFor('fleet', first)]) },
        { object: other, status: statusAnnouncing([childNameFor('other', 'gone-node')]) },
      ],
      NODES,
      new Map(),
    );
    expect(claims).toEqual([]);
  });

  it('names the operations this process created for other rollouts that the cache does not show yet', () => {
    const created = new Map([
      ['other', [{ name: 'other-abc', machineRef: third }]],
      ['fleet', [{ name: 'fleet-def', machineRef: first }]],
    ]);
    expect(claimsElsewhere('fleet', [], NODES, created)).toEqual([
      { name: 'other-abc', machineRef: third, phase: 'Pending' },
    ]);
  });

  it('reads nothing into a status it cannot read', () => {
    expect(claimsElsewhere('fleet', [{ object: rolloutObject('other'), status: 'garbage' }], NODES, new Map())).toEqual(
      [],
    );
  });
});
