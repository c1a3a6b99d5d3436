/**
 * Where a node's trust in releases comes from (docs/security.md#signed-releases): a TUF repository
 * whose first root was installed with the agent. Absent (`null`), releases are trusted by their
 * URL and optional digest alone, and the upgrader warns at start.
 */
export interface TufTrustSettings {
  readonly mode: 'tuf';
  /** The initial trusted root.json, a root-owned file installed with the agent (never from the cluster). */
  readonly rootFile: string;
  /** Base URL of the repository's metadata (`1.root.json`, `timestamp.json`, …), ending in "/". */
  readonly metadataUrl: string;
  /** Base URL of the targets, ending in "/": a release URL under it names the target path. */
  readonly targetsUrl: string;
  /** Other bases that serve the same targets, each ending in "/". */
  readonly mirrors: readonly string[];
  /** Directory of the trusted metadata this node has verified so far. */
  readonly cacheDir: string;
}

export type TrustSettings = TufTrustSettings | null;

/** Every base a release URL may lie under: the targets URL, then the mirrors. */
export function targetBases(settings: TufTrustSettings): readonly string[] {
  return [settings.targetsUrl, ...settings.mirrors];
}

/**
 * A base URL of the repository: absolute http(s), ending in "/" so that "under it" is a path
 * prefix, and nothing a secret could hide in (user information, query, fragment): these URLs
 * are printed in status and logs.
 */
export function isTrustBaseUrl(text: string): boolean {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return false;
  }
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.href === text &&
    url.pathname.endsWith('/') &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === ''
  );
}

/** The trusted-metadata directory when `trust.cacheDir` is not set: beside the upgrade state file. */
export function defaultTrustCacheDir(statePath: string): string {
  const slash = statePath.lastIndexOf('/');
  return `${slash <= 0 ? '' : statePath.slice(0, slash)}/agent-upgrade-trust`;
}
