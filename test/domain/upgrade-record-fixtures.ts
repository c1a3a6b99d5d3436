/** Records along the lifecycle, and the text mutations the rejection tests start from. */
import type { Sha256 } from '../../src/domain/common/digest.js';
import {
  newUpgradeRecord,
  serializeRecord,
  withCandidate,
  withCandidateDigest,
  withFailure,
  withSwitchCommitted,
  type NewRecordInput,
  type UpgradeRecord,
} from '../../src/domain/node/record/upgrade-record.js';

export const DIGEST = 'a'.repeat(64) as Sha256;
export const INSTANCE = '0123456789abcdef0123456789abcdef';

export const input: NewRecordInput = {
  operationName: 'upgrade-node-1',
  operationUid: '7d2c1a9e-0f4b-4c7e-9a51-6b3f0d2e8c11',
  instanceId: INSTANCE,
  activeMachine: 'kube1',
};

function created(overrides: Partial<NewRecordInput> = {}): UpgradeRecord {
  const result = newUpgradeRecord({ ...input, ...overrides });
  if (!result.ok) throw new Error(`test setup: ${result.failure.message}`);
  return result.value;
}

export const fresh = created();
export const chosen = withCandidate(fresh, 'green', 'blue');
const digested = withCandidateDigest(chosen, DIGEST);
export const committed = withSwitchCommitted(digested);
const failedBefore = withFailure(
  chosen,
  { reason: 'ExecutionFailed', code: 'E_DIGEST_MISMATCH', message: 'the archive digest does not match' },
  false,
);
const failedAfter = withFailure(
  committed,
  { reason: 'DaemonFailed', code: 'E_UNHEALTHY', message: 'the candidate did not become healthy' },
  true,
);
const minimal = created({ operationUid: null, activeMachine: null });

export const lifecycle: readonly [string, UpgradeRecord][] = [
  ['fresh', fresh],
  ['minimal', minimal],
  ['candidate chosen', chosen],
  ['candidate digest', digested],
  ['switch committed', committed],
  ['failed before the switch', failedBefore],
  ['failed after the switch', failedAfter],
  ['blue candidate', withCandidate(fresh, 'blue', 'green')],
  [
    'unicode message',
    withFailure(
      fresh,
      { reason: 'DaemonFailed', code: 'E_SERVICE', message: 'unit failed: “aks-flex-node” ✗ \u{1F4A5}' },
      false,
    ),
  ],
];

/** The serialised form of `committed` as a plain object, to mutate in rejection cases. */
export function baseObject(): Record<string, unknown> {
  return JSON.parse(serializeRecord(failedAfter)) as Record<string, unknown>;
}

// The cases reach into any nested field of the parsed JSON to break it: untyped on purpose.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function mutate(change: (record: Record<string, any>) => void): string {
  const value = baseObject();
  change(value);
  return JSON.stringify(value);
}
