import { describe, expect, it } from 'vitest';
import {
  checkCandidateVersion,
  checkNotQuarantined,
  versionFromOutput,
} from '../../src/domain/node/activation/candidate-policy.js';
import { sha256FromHex } from '../../src/domain/common/digest.js';
import { emptyUpgradeState, withQuarantined } from '../../src/domain/node/record/upgrade-state.js';
import { formatVersion, parseVersion, type Version } from '../../src/domain/common/version.js';

const v = (text: string): Version => {
  const parsed = parseVersion(text);
  if (!parsed.ok) throw new Error(text);
  return parsed.value;
};

describe('versionFromOutput', () => {
  it.each([
    ['1.2.3\n', '1.2.3'],
    ['v1.2.3', '1.2.3'],
    ['aks-flex-node version v0.4.1 (commit abc123)', '0.4.1'],
    ['agent-upgrade 0.1.0\n', '0.1.0'],
    ['Version: 2.0.0-rc.1+build.5', '2.0.0-rc.1+build.5'],
    ['version=3.4.5', '3.4.5'],
  ])('finds the version in %j', (output, expected) => {
    const found = versionFromOutput(output);
    expect(found.ok ? formatVersion(found.value) : null).toBe(expected);
  });

  it.each(['', 'no version here', '1.2', 'v1.2.x', 'release-1.2.3.4.5'])(
    'refuses %j with E_CANDIDATE_VERSION',
    (output) => {
      const found = versionFromOutput(output);
      expect(found.ok ? null : found.failure.code).toBe('E_CANDIDATE_VERSION');
    },
  );

  it('only looks at the first 4 KiB of output', () => {
    const found = versionFromOutput(`${' '.repeat(5000)}1.2.3`);
    expect(found.ok).toBe(false);
  });
});

describe('checkCandidateVersion', () => {
  it.each([
    ['no request, no current', '1.0.0', null, null, false, null],
    ['matching request', '1.2.3', '1.2.3', null, false, null],
    ['matching request with a v and build metadata', '1.2.3', 'v1.2.3+build', null, false, null],
    ['request mismatch', '1.2.4', '1.2.3', null, false, 'E_VERSION_MISMATCH'],
    ['newer than current', '2.0.0', null, '1.9.9', false, null],
    ['equal to current', '1.0.0', null, '1.0.0', false, null],
    ['older than current', '1.0.0', null, '1.0.1', false, 'E_DOWNGRADE_REFUSED'],
    ['older than current, downgrade allowed', '1.0.0', null, '1.0.1', true, null],
    ['pre-release of the current', '1.0.1-rc.1', null, '1.0.1', false, 'E_DOWNGRADE_REFUSED'],
    ['mismatch wins over downgrade', '0.9.0', '1.0.0', '1.0.1', false, 'E_VERSION_MISMATCH'],
  ] as const)('%s', (_name, printed, requested, current, allowDowngrade, code) => {
    const verdict = checkCandidateVersion({
      printed: v(printed),
      requested: requested === null ? null : v(requested),
      current: current === null ? null : v(current),
      allowDowngrade,
      requestedBy: 'command',
    });
    expect(verdict.ok ? null : verdict.failure.code).toBe(code);
  });

  // The refusal reaches a published Failed message on the managed path: it must name the switch
  // that request really has, since a fleet rollback's operations do downgrade.
  it.each([
    ['command', '--allow-downgrade'],
    ['operation', 'allowDowngrade: "true"'],
  ] as const)('a downgrade refused for a %s names the switch it has', (requestedBy, remedy) => {
    const verdict = checkCandidateVersion({
      printed: v('1.0.0'),
      requested: null,
      current: v('1.0.1'),
      allowDowngrade: false,
      requestedBy,
    });
    expect(verdict.ok ? null : verdict.failure.code).toBe('E_DOWNGRADE_REFUSED');
    const message = verdict.ok ? '' : verdict.failure.message;
    expect(message).toContain(remedy);
    expect(message).not.toMatch(/never downgrades/);
  });
});

describe('checkNotQuarantined', () => {
  const digest = sha256FromHex('a'.repeat(64));
  const quarantined = withQuarantined(emptyUpgradeState(), digest);
  it.each([
    ['a clean digest', emptyUpgradeState(), false, null],
    ['a quarantined digest', quarantined, false, 'E_QUARANTINED'],
    ['a quarantined digest, forced', quarantined, true, null],
  ] as const)('%s', (_name, state, force, code) => {
    const verdict = checkNotQuarantined(state, digest, force);
    expect(verdict.ok ? null : verdict.failure.code).toBe(code);
  });
});
