/** States to start from, and the text mutations the rejection tests start from. */
import type { Sha256 } from '../../src/domain/common/digest.js';
import {
  emptyUpgradeState,
  QUARANTINE_MAX,
  serializeUpgradeState,
  withCommittedVersion,
  withQuarantined,
  withSlotInfo,
  withUnsignedAccepted,
  type UpgradeState,
} from '../../src/domain/node/record/upgrade-state.js';

export const digest = (n: number): Sha256 => n.toString(16).padStart(64, '0') as Sha256;
export const A = digest(0xa);
export const B = digest(0xb);
export const C = digest(0xc);

export const empty = emptyUpgradeState();
export const populated: UpgradeState = withCommittedVersion(
  withQuarantined(
    withQuarantined(
      withSlotInfo(withSlotInfo(empty, 'blue', { digest: A, version: 'v1.2.3' }), 'green', {
        digest: B,
        version: '1.3.0-rc.1+build.7',
      }),
      C,
    ),
    B,
  ),
  '1.3.0-rc.1',
);
export const full = Array.from({ length: QUARANTINE_MAX }, (_, i) => digest(0x100 + i)).reduce(withQuarantined, empty);

export const samples: readonly [string, UpgradeState][] = [
  ['empty', empty],
  ['blue only, unknown version', withSlotInfo(empty, 'blue', { digest: A, version: null })],
  ['green only', withSlotInfo(empty, 'green', { digest: B, version: '0.0.1' })],
  ['populated', populated],
  ['full quarantine', full],
  ['only a committed version', withCommittedVersion(empty, '2.0.0')],
  ['an unsigned binary accepted', withUnsignedAccepted(populated, A)],
];

// The cases reach into any nested field of the parsed JSON to break it: untyped on purpose.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function mutate(change: (state: Record<string, any>) => void): string {
  const value = JSON.parse(serializeUpgradeState(populated)) as Record<string, unknown>;
  change(value);
  return JSON.stringify(value);
}
