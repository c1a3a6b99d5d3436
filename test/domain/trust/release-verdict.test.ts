/** judgeRelease: every artifact of an AgentRelease against what the signed metadata says of it. */
import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../../src/domain/common/digest.js';
import type { SignedTarget } from '../../../src/domain/common/trust/signed-target.js';
import { parseReleaseSpec, type AgentReleaseSpec } from '../../../src/domain/fleet/spec/release-spec.js';
import {
  artifactTargetPaths,
  judgeRelease,
  metadataUntrusted,
  type ReleaseVerdict,
} from '../../../src/domain/fleet/trust/release-verdict.js';

const TARGETS = 'https://releases.example/targets/';
const MIRROR = 'https://mirror.example/agent/';
const BASES = [TARGETS, MIRROR];
const AMD = 'a'.repeat(64) as Sha256;
const ARM = 'b'.repeat(64) as Sha256;

function spec(overrides: { version?: string; amd64Url?: string; arm64Url?: string } = {}): AgentReleaseSpec {
  const parsed = parseReleaseSpec({
    version: overrides.version ?? '1.4.2',
    artifacts: [
      { arch: 'amd64', downloadURL: overrides.amd64Url ?? `${TARGETS}v1.4.2/agent-amd64.tar.gz?sig=x`, sha256: AMD },
      { arch: 'arm64', downloadURL: overrides.arm64Url ?? `${TARGETS}v1.4.2/agent-arm64.tar.gz`, sha256: ARM },
    ],
  });
  if (!parsed.ok) throw new Error('fixture spec is invalid');
  return parsed.value;
}

const target = (
  path: string,
  sha256: Sha256,
  arch: string | null,
  version: string | null = 'v1.4.2',
): SignedTarget => ({
  path,
  length: 1234,
  sha256,
  version,
  arch,
});

/** The metadata of a publisher that signed both artifacts as the release says. */
function signedMetadata(): Map<string, SignedTarget | null> {
  return new Map([
    ['v1.4.2/agent-amd64.tar.gz', target('v1.4.2/agent-amd64.tar.gz', AMD, 'amd64')],
    ['v1.4.2/agent-arm64.tar.gz', target('v1.4.2/agent-arm64.tar.gz', ARM, 'arm64')],
  ]);
}

const mismatchesOf = (verdict: ReleaseVerdict) =>
  verdict.kind === 'untrusted' ? verdict.mismatches.map(({ arch, mismatch }) => [arch, mismatch]) : [];

describe('judgeRelease', () => {
  it('vouches for a release whose every artifact is signed as it says, naming the targets', () => {
    const verdict = judgeRelease(spec(), BASES, signedMetadata());
    expect(verdict).toEqual({
      kind: 'signed',
      signed: {
        version: '1.4.2',
        artifacts: [
          { arch: 'amd64', targetPath: 'v1.4.2/agent-amd64.tar.gz', sha256: AMD },
          { arch: 'arm64', targetPath: 'v1.4.2/agent-arm64.tar.gz', sha256: ARM },
        ],
      },
    });
  });

  it('takes an artifact from a mirror the settings name', () => {
    const release = spec({ arm64Url: `${MIRROR}v1.4.2/agent-arm64.tar.gz` });
    expect(judgeRelease(release, BASES, signedMetadata()).kind).toBe('signed');
  });

  it.each<[string, Partial<Parameters<typeof spec>[0]>, (metadata: Map<string, SignedTarget | null>) => void, string]>([
    [
      'a URL outside the targets URL and the mirrors',
      { amd64Url: 'https://elsewhere.example/targets/v1.4.2/agent-amd64.tar.gz' },
      () => undefined,
      'OutsideTargets',
    ],
    [
      'a URL naming no target (an empty segment)',
      { amd64Url: `${TARGETS}v1.4.2//agent-amd64.tar.gz` },
      () => undefined,
      'OutsideTargets',
    ],
    ['a target the metadata does not sign', {}, (m) => m.delete('v1.4.2/agent-amd64.tar.gz'), 'NotSigned'],
    ['a target looked up and found unsigned', {}, (m) => m.set('v1.4.2/agent-amd64.tar.gz', null), 'NotSigned'],
    [
      'a target for another architecture',
      {},
      (m) => m.set('v1.4.2/agent-amd64.tar.gz', target('p', AMD, 'arm64')),
      'OtherArch',
    ],
    ['a target of another version', { version: '1.4.3' }, () => undefined, 'OtherVersion'],
    [
      'a target whose signed version is none',
      {},
      (m) => m.set('v1.4.2/agent-amd64.tar.gz', target('p', AMD, 'amd64', 'latest')),
      'OtherVersion',
    ],
    [
      'a target with another SHA-256',
      {},
      (m) => m.set('v1.4.2/agent-amd64.tar.gz', target('p', ARM, 'amd64')),
      'OtherDigest',
    ],
    ['a target without custom.arch', {}, (m) => m.set('v1.4.2/agent-amd64.tar.gz', target('p', AMD, null)), 'NoCustom'],
    [
      'a target without custom.version',
      {},
      (m) => m.set('v1.4.2/agent-amd64.tar.gz', target('p', AMD, 'amd64', null)),
      'NoCustom',
    ],
  ])('refuses %s: E_UNTRUSTED, naming the artifact', (_name, specChange, metadataChange, mismatch) => {
    const metadata = signedMetadata();
    metadataChange(metadata);
    const verdict = judgeRelease(spec(specChange), BASES, metadata);
    expect(verdict).toMatchObject({ kind: 'untrusted', code: 'E_UNTRUSTED' });
    const expected =
      specChange?.version === undefined
        ? [['amd64', mismatch]]
        : [
            ['amd64', mismatch],
            ['arm64', mismatch],
          ];
    expect(mismatchesOf(verdict)).toEqual(expected);
  });

  it('names every artifact that differs, not only the first', () => {
    const metadata = signedMetadata();
    metadata.delete('v1.4.2/agent-amd64.tar.gz');
    metadata.set('v1.4.2/agent-arm64.tar.gz', target('p', AMD, 'arm64'));
    expect(mismatchesOf(judgeRelease(spec(), BASES, metadata))).toEqual([
      ['amd64', 'NotSigned'],
      ['arm64', 'OtherDigest'],
    ]);
  });

  it('reads the target path from the URL path after the base, without its query', () => {
    expect(artifactTargetPaths(spec(), BASES).map((entry) => entry.targetPath)).toEqual([
      'v1.4.2/agent-amd64.tar.gz',
      'v1.4.2/agent-arm64.tar.gz',
    ]);
    const outside = spec({ amd64Url: 'https://elsewhere.example/a.tar.gz' });
    expect(artifactTargetPaths(outside, BASES)[0]?.targetPath).toBeNull();
  });

  it('a metadata failure is its own verdict: E_TRUST_METADATA, no artifact named', () => {
    expect(metadataUntrusted('the timestamp has expired')).toMatchObject({
      kind: 'untrusted',
      code: 'E_TRUST_METADATA',
      mismatches: [],
    });
  });
});
