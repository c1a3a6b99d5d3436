// How a separately delivered candidate is bound to the publisher: every combination of the
// configuration and the request, and the byte check against a signed target.
import { describe, expect, it } from 'vitest';
import {
  checkSignedBytes,
  decideCandidateSignature,
  type CandidateSignatureRequest,
} from '../../../src/domain/node/activation/candidate-signature.js';
import type { Sha256 } from '../../../src/domain/common/digest.js';
import type { TrustedRelease } from '../../../src/domain/common/trust/signed-target.js';
import { parseVersion } from '../../../src/domain/common/version.js';

const outcome = (request: CandidateSignatureRequest): string => {
  const decided = decideCandidateSignature(request);
  return decided.ok ? decided.value.kind : decided.failure.code;
};

describe('decideCandidateSignature', () => {
  // [trust configured, verified download, signed target, accept unsigned] → outcome
  const table: readonly [boolean, boolean, string | null, boolean, string][] = [
    [false, false, null, false, 'not-required'],
    [false, false, null, true, 'not-required'],
    [false, false, 'bin/agent', false, 'E_USAGE'],
    [false, true, null, false, 'not-required'],
    [false, false, 'bin/agent', true, 'E_USAGE'],
    [true, false, null, false, 'E_UNTRUSTED'],
    [true, false, null, true, 'accept-unsigned'],
    [true, false, 'bin/agent', false, 'verify-target'],
    [true, false, 'bin/agent', true, 'E_USAGE'],
    [true, true, null, false, 'verified-download'],
    [true, true, null, true, 'verified-download'],
  ];
  it.each(table)('trust %s, download %s, target %s, unsigned %s: %s', (trust, download, target, unsigned, want) => {
    expect(
      outcome({ trustConfigured: trust, verifiedDownload: download, signedTarget: target, acceptUnsigned: unsigned }),
    ).toBe(want);
  });

  it('keeps the target path it was given', () => {
    const decided = decideCandidateSignature({
      trustConfigured: true,
      verifiedDownload: false,
      signedTarget: 'v2/agent-linux-amd64',
      acceptUnsigned: false,
    });
    expect(decided).toEqual({ ok: true, value: { kind: 'verify-target', targetPath: 'v2/agent-linux-amd64' } });
  });
});

describe('checkSignedBytes', () => {
  const version = parseVersion('2.0.0');
  if (!version.ok) throw new Error('fixture');
  const signed = 'a'.repeat(64) as Sha256;
  const release: TrustedRelease = { path: 'bin/agent', length: 100, sha256: signed, version: version.value };

  it.each([
    ['the signed bytes', { digest: signed, bytes: 100 }, 'ok'],
    ['another length', { digest: signed, bytes: 99 }, 'E_UNTRUSTED'],
    ['another digest', { digest: 'b'.repeat(64) as Sha256, bytes: 100 }, 'E_UNTRUSTED'],
  ])('%s: %s', (_name, candidate, want) => {
    const checked = checkSignedBytes(release, candidate);
    expect(checked.ok ? 'ok' : checked.failure.code).toBe(want);
  });
});
