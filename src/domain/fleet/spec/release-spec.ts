import { isSha256, type Sha256 } from '../../common/digest.js';
import { parseDownloadUrl } from '../../common/url-policy.js';
import { formatVersion, parseVersion, type Version } from '../../common/version.js';
import {
  booleanField,
  checkKnownFields,
  isRecord,
  objectField,
  ProblemList,
  stringField,
  type Parsed,
} from './spec-problems.js';
import { isOneOf } from '../../common/one-of.js';

/** An AgentRelease's spec: a version and one artifact per architecture. Immutable but for quarantine. */

export const ARCHITECTURES = ['amd64', 'arm64'] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

export interface Artifact {
  readonly arch: Architecture;
  readonly downloadURL: string;
  readonly sha256: Sha256;
}

export interface Quarantine {
  readonly quarantined: boolean;
  readonly reason: string;
}

export interface AgentReleaseSpec {
  readonly version: Version;
  /** The version as written, for messages and the rollout's release snapshot. */
  readonly versionText: string;
  readonly artifacts: readonly Artifact[];
  readonly quarantine: Quarantine;
}

export function parseReleaseSpec(raw: unknown): Parsed<AgentReleaseSpec> {
  const problems = new ProblemList();
  if (!isRecord(raw)) {
    problems.add('E_FIELD_SHAPE', 'spec', 'must be an object');
    return problems.fail();
  }
  checkKnownFields(raw, ['version', 'artifacts', 'quarantine'], 'spec', problems);
  const versionText = stringField(raw, 'version', 'spec', problems, 'E_RELEASE_VERSION');
  const version = versionText === null ? null : parseVersion(versionText);
  if (version === null || !version.ok) problems.add('E_RELEASE_VERSION', 'spec.version', 'must be a semantic version');
  const artifacts = parseArtifacts(raw['artifacts'], problems);
  const quarantine = parseQuarantine(raw, problems);
  if (version === null || !version.ok) return problems.fail();
  return problems.result({
    version: version.value,
    versionText: formatVersion(version.value),
    artifacts,
    quarantine,
  });
}

function parseArtifacts(raw: unknown, problems: ProblemList): Artifact[] {
  if (!Array.isArray(raw) || raw.length === 0) {
    problems.add('E_RELEASE_ARTIFACT', 'spec.artifacts', 'must list at least one artifact');
    return [];
  }
  const artifacts: Artifact[] = [];
  raw.forEach((entry: unknown, index) => {
    const path = `spec.artifacts[${index}]`;
    if (!isRecord(entry)) {
      problems.add('E_RELEASE_ARTIFACT', path, 'must be an object');
      return;
    }
    checkKnownFields(entry, ['arch', 'downloadURL', 'sha256'], path, problems);
    const arch = entry['arch'];
    if (!isOneOf(ARCHITECTURES, arch)) {
      problems.add('E_RELEASE_ARTIFACT', `${path}.arch`, `must be one of ${ARCHITECTURES.join(', ')}`);
    } else if (artifacts.some((artifact) => artifact.arch === arch)) {
      problems.add('E_RELEASE_ARTIFACT', `${path}.arch`, `${String(arch)} is listed twice`);
    }
    const url = entry['downloadURL'];
    const urlOk = typeof url === 'string' && parseDownloadUrl(url, { allowHttp: true, requireDigest: true }, true).ok;
    if (!urlOk)
      problems.add(
        'E_RELEASE_URL',
        `${path}.downloadURL`,
        'must be an http(s) URL with a host, no user information or fragment',
      );
    const digest = entry['sha256'];
    if (!isSha256(digest))
      problems.add('E_RELEASE_DIGEST', `${path}.sha256`, 'must be 64 lowercase hexadecimal digits');
    if (urlOk && isSha256(digest) && isOneOf(ARCHITECTURES, arch)) {
      artifacts.push({ arch: arch as Architecture, downloadURL: url as string, sha256: digest });
    }
  });
  return artifacts;
}

function parseQuarantine(raw: Readonly<Record<string, unknown>>, problems: ProblemList): Quarantine {
  const quarantine = objectField(raw, 'quarantine', 'spec', problems);
  if (quarantine === null) return { quarantined: false, reason: '' };
  checkKnownFields(quarantine, ['quarantined', 'reason'], 'spec.quarantine', problems);
  const quarantined = booleanField(quarantine, 'quarantined', 'spec.quarantine', problems) ?? false;
  const reason = stringField(quarantine, 'reason', 'spec.quarantine', problems, 'E_RELEASE_QUARANTINE') ?? '';
  return { quarantined, reason };
}

export function artifactFor(spec: AgentReleaseSpec, arch: string | undefined): Artifact | null {
  return spec.artifacts.find((artifact) => artifact.arch === arch) ?? null;
}
