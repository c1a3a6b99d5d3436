import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { sha256FromHex } from '../../src/domain/common/digest.js';
import { emptyUpgradeState, withQuarantined } from '../../src/domain/node/record/upgrade-state.js';
import {
  acceptedCandidate,
  CountingRunner,
  refusedCandidate,
  script,
  useCandidateScratch,
  v,
  writeCandidate,
} from './e-candidate-scratch.js';

/**
 * Category E: candidate verification, with real processes in a scratch directory (the checks and
 * what they assert: e-candidate-scratch.ts).
 * Here: the printed version cannot be parsed, or the policy refuses it.
 */

useCandidateScratch();

describe('E the printed version → E_CANDIDATE_VERSION when it cannot be parsed', () => {
  it.each([
    ['"latest"', 'echo "aks-flex-node version latest"'],
    ['two components', 'echo "version 1.2"'],
    ['four components', 'echo "version 1.2.3.4"'],
    ['a leading zero', 'echo "version 01.2.3"'],
    ['nothing at all', 'exec >/dev/null; true'],
    ['a 100-character pre-release', `echo "version 1.2.3-${'a'.repeat(100)}"`],
    ['a number too large', 'echo "version 1.2.99999999999"'],
  ])('%s', async (_name, body) => {
    writeCandidate(script(`${body}\nexit 0`));
    await refusedCandidate('E_CANDIDATE_VERSION', { ran: true });
  });
});

describe('E version policy: mismatch, downgrade, quarantine', () => {
  it.each([
    ['1.2.3', '1.2.4'],
    ['1.2.3', '1.2.3-rc.1'],
    ['1.2.3-rc.1', '1.2.3'],
    ['2.0.0', '1.2.3'],
  ])('prints %s when %s was requested → E_VERSION_MISMATCH', async (printed, requested) => {
    writeCandidate(script(`echo "aks-flex-node version v${printed}"`));
    await refusedCandidate('E_VERSION_MISMATCH', { check: { requestedVersion: v(requested) }, ran: true });
  });

  it('control: build metadata is ignored when matching the requested version', async () => {
    writeCandidate(script('echo "version 1.2.3+build.7"'));
    await acceptedCandidate('1.2.3+build.7', { check: { requestedVersion: v('1.2.3+other') } });
  });

  it.each([
    ['1.2.3', '1.3.0'],
    ['1.3.0-rc.1', '1.3.0'],
    ['0.9.9', '1.0.0'],
  ])('prints %s below the current %s → E_DOWNGRADE_REFUSED', async (printed, current) => {
    writeCandidate(script(`echo "version ${printed}"`));
    await refusedCandidate('E_DOWNGRADE_REFUSED', { check: { currentVersion: v(current) }, ran: true });
  });

  it('control: the same downgrade is accepted with allowDowngrade', async () => {
    writeCandidate(script('echo "version 1.2.3"'));
    await acceptedCandidate('1.2.3', { check: { currentVersion: v('1.3.0'), allowDowngrade: true } });
  });

  it('control: a version equal to the current one is not a downgrade', async () => {
    writeCandidate(script('echo "version 1.3.0"'));
    await acceptedCandidate('1.3.0', { check: { currentVersion: v('1.3.0') } });
  });

  it('a quarantined digest → E_QUARANTINED, and the candidate never runs', async () => {
    const path = writeCandidate(script('echo 1.2.3'));
    const digest = sha256FromHex(createHash('sha256').update(readFileSync(path)).digest('hex'));
    const runner = new CountingRunner();
    await refusedCandidate('E_QUARANTINED', {
      check: { state: withQuarantined(emptyUpgradeState(), digest) },
      runner,
      ran: false,
    });
    expect(runner.calls).toEqual([]);
  });

  it('control: the quarantined digest is accepted with force', async () => {
    const path = writeCandidate(script('echo 1.2.3'));
    const digest = sha256FromHex(createHash('sha256').update(readFileSync(path)).digest('hex'));
    const checked = await acceptedCandidate('1.2.3', {
      check: { state: withQuarantined(emptyUpgradeState(), digest), force: true },
    });
    expect(checked.digest).toBe(digest);
  });
});
