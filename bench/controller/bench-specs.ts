/** The rollouts the controller benchmark runs: a complete one over the whole fleet, and failing canaries. */
import { NEW_RELEASE } from '../../test/sim/fleet/fleet-scenarios.js';

export const HALT_RELEASE = 'agent-v1.4.3';
export const HALT_VERSION = '1.4.3';
const TARGETS = { selector: { matchLabels: { 'node-role.kubernetes.io/agent': '' } } };

/** One wave of 10 canaries, then the whole fleet at once: every operation of the fleet gets created. */
export function completeRolloutSpec(): Record<string, unknown> {
  return {
    releaseRef: { name: NEW_RELEASE },
    targets: TARGETS,
    state: 'Run',
    strategy: {
      waves: [
        { name: 'canary', count: 10, maxInFlight: 10, failureBudget: 0 },
        { name: 'all', percent: 100, maxInFlight: '100%', failureBudget: '1%' },
      ],
      maxUnavailable: '100%',
      operationTimeout: '30m',
      onFailure: 'Halt',
    },
  };
}

/** Three canaries with no failure allowed; no quarantine, so the next round can use the release again. */
export function haltRolloutSpec(): Record<string, unknown> {
  return {
    releaseRef: { name: HALT_RELEASE },
    targets: TARGETS,
    state: 'Run',
    strategy: {
      waves: [
        { name: 'canary', count: 3, maxInFlight: 3, failureBudget: 0 },
        { name: 'rest', percent: 100, maxInFlight: '10%', failureBudget: '1%' },
      ],
      maxUnavailable: '10%',
      operationTimeout: '30m',
      onFailure: 'Halt',
      quarantineOnHalt: false,
    },
  };
}
