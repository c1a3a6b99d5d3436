import { fail, ok, type Result } from './failure.js';

/**
 * A release version in semantic-versioning form, `v` prefix optional. Build metadata is kept
 * for display but ignored by comparison, as semver prescribes.
 */
export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: readonly (string | number)[];
  readonly build: string;
}

export const VERSION_TEXT_MAX_LENGTH = 64;

const VERSION_PATTERN =
  /^v?(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})\.(0|[1-9]\d{0,8})(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$/;

export function parseVersion(text: string): Result<Version> {
  const trimmed = text.trim();
  if (trimmed.length === 0 || trimmed.length > VERSION_TEXT_MAX_LENGTH) {
    return fail('E_CANDIDATE_VERSION', `a version must be 1 to ${VERSION_TEXT_MAX_LENGTH} characters long`);
  }
  const match = VERSION_PATTERN.exec(trimmed);
  if (match === null)
    return fail('E_CANDIDATE_VERSION', 'the version is not of the form [v]MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]');
  const prereleaseText = match[4];
  const prerelease: (string | number)[] = [];
  if (prereleaseText !== undefined) {
    for (const identifier of prereleaseText.split('.')) {
      if (/^\d+$/.test(identifier)) {
        if (identifier.length > 1 && identifier.startsWith('0')) {
          return fail('E_CANDIDATE_VERSION', 'numeric pre-release identifiers must not have leading zeros');
        }
        const numeric = Number(identifier);
        // Beyond 2^53 a number no longer round-trips (formatting gives "1.2e+22") nor compares exactly.
        if (!Number.isSafeInteger(numeric)) {
          return fail('E_CANDIDATE_VERSION', 'numeric pre-release identifiers must be at most 9007199254740991');
        }
        prerelease.push(numeric);
      } else {
        prerelease.push(identifier);
      }
    }
  }
  return ok({
    major: Number(match[1]),
    minor: Number(match[2]),
    patch: Number(match[3]),
    prerelease,
    build: match[5] ?? '',
  });
}

export function formatVersion(version: Version): string {
  const core = `${version.major}.${version.minor}.${version.patch}`;
  const pre = version.prerelease.length > 0 ? `-${version.prerelease.join('.')}` : '';
  const build = version.build !== '' ? `+${version.build}` : '';
  return `${core}${pre}${build}`;
}

/** Semver precedence: negative when a < b, zero when equal, positive when a > b. */
export function compareVersions(a: Version, b: Version): number {
  for (const key of ['major', 'minor', 'patch'] as const) {
    if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  }
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    return b.prerelease.length - a.prerelease.length === 0 ? 0 : a.prerelease.length === 0 ? 1 : -1;
  }
  const length = Math.max(a.prerelease.length, b.prerelease.length);
  for (let index = 0; index < length; index += 1) {
    const left = a.prerelease[index];
    const right = b.prerelease[index];
    if (left === undefined) return -1;
    if (right === undefined) return 1;
    if (left === right) continue;
    if (typeof left === 'number' && typeof right === 'number') return left < right ? -1 : 1;
    if (typeof left === 'number') return -1;
    if (typeof right === 'number') return 1;
    return left < right ? -1 : 1;
  }
  return 0;
}
