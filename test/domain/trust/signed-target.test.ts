import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../../src/domain/common/digest.js';
import {
  judgeSignedTarget,
  type SignedTarget,
  type TrustRequest,
} from '../../../src/domain/common/trust/signed-target.js';

const SIGNED: SignedTarget = {
  path: 'v2/agent.tar.gz',
  length: 1234,
  sha256: 'b'.repeat(64) as Sha256,
  version: 'v2.0.0',
  arch: 'amd64',
};
const REQUEST: TrustRequest = { targetPath: 'v2/agent.tar.gz', requestedSha256: null, hostArch: 'amd64' };

const codeOf = (result: ReturnType<typeof judgeSignedTarget>): string => (result.ok ? 'ok' : result.failure.code);

describe('judgeSignedTarget', () => {
  it('binds the signed length, digest and version', () => {
    const judged = judgeSignedTarget(SIGNED, REQUEST);
    expect(judged.ok && judged.value).toMatchObject({ length: 1234, sha256: SIGNED.sha256 });
    expect(judged.ok && judged.value.version).toMatchObject({ major: 2, minor: 0, patch: 0 });
  });

  it('accepts a requested digest equal to the signed one', () => {
    expect(codeOf(judgeSignedTarget(SIGNED, { ...REQUEST, requestedSha256: SIGNED.sha256 }))).toBe('ok');
  });

  it.each<[string, SignedTarget | null, Partial<TrustRequest>]>([
    ['no signed target', null, {}],
    ['a requested digest that differs', SIGNED, { requestedSha256: 'c'.repeat(64) as Sha256 }],
    ['another architecture', SIGNED, { hostArch: 'arm64' }],
    ['no signed version', { ...SIGNED, version: null }, {}],
    ['no signed arch', { ...SIGNED, arch: null }, {}],
    ['a signed version that is none', { ...SIGNED, version: 'latest' }, {}],
  ])('refuses %s: E_UNTRUSTED', (_name, signed, request) => {
    expect(codeOf(judgeSignedTarget(signed, { ...REQUEST, ...request }))).toBe('E_UNTRUSTED');
  });
});
