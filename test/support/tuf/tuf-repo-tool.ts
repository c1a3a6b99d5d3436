// TUF repositories for tests, made and changed by tuf-repo (test/tuf-repo): a go-tuf v2 tool, so
// the repository side is an implementation independent of the client under test. The binary is
// built outside the clone by scripts/build-tuf-repo-tool.sh; tests never build it themselves.
//
// Layout of a repository's dir (the tool's --dir):
//   keys/<role>-<n>.json   test private keys (ed25519 seeds, hex)
//   staged/<role>.json     the latest metadata of every role, published or not
//   repository/metadata/   N.root.json, timestamp.json, N.snapshot.json, N.targets.json,
//                          N.<delegated>.json, and N.timestamp.json (old timestamps, for attacks)
//   repository/targets/    <target dir>/<sha256>.<base name>

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '../../..');
const BUILD_SCRIPT = 'scripts/build-tuf-repo-tool.sh';
const TOOL_TIMEOUT_MS = 30_000;

let toolPath: string | undefined;

/** The built tuf-repo binary, or an error that says how to build it (never a silent skip). */
export function tufRepoTool(): string {
  if (toolPath !== undefined) return toolPath;
  const check = spawnSync('bash', [join(REPO, BUILD_SCRIPT), '--check'], { encoding: 'utf8', timeout: 30_000 });
  const path = check.stdout.trim();
  if (check.status !== 0 || path === '') {
    throw new Error(
      `The tuf-repo test tool is not built (or is stale) at ${path || 'its cache path'}. ` +
        `Build it with \`bash ${BUILD_SCRIPT}\` (needs Go and, the first time, the Go module proxy). ` +
        `${check.stderr}`.trim(),
    );
  }
  toolPath = path;
  return path;
}

export interface TufDelegation {
  readonly name: string;
  /** Path patterns; `*` stays within one segment, so `agent/*` holds `agent/x` but not `agent/x/y`. */
  readonly paths: readonly string[];
  readonly keys?: number;
  readonly threshold?: number;
}

export interface TufInitOptions {
  /** Days until every role expires. Default 365. */
  readonly expiresDays?: number;
  readonly rootKeys?: number;
  readonly rootThreshold?: number;
  readonly targetsKeys?: number;
  readonly targetsThreshold?: number;
  readonly delegate?: TufDelegation;
}

export interface TufRotateRootOptions {
  /** Root keys in the new root. Default: as many as now. */
  readonly newKeys?: number;
  /** Root threshold in the new root. Default: as now. */
  readonly threshold?: number;
  /** How many old root keys sign the new root. Default all. */
  readonly signOld?: number;
  /** How many new root keys sign it. Default all. */
  readonly signNew?: number;
  /** Top-level roles that get new keys too (and are re-signed with them). */
  readonly rotateRoles?: readonly ('timestamp' | 'snapshot' | 'targets')[];
}

export interface TufRoleInfo {
  readonly version: number;
  /** RFC 3339, UTC, whole seconds. */
  readonly expires: string;
  readonly keyids: readonly string[];
  readonly threshold: number;
  /** False for a targets role with changes staged since its last publish. */
  readonly published: boolean;
  /** Delegated roles only. */
  readonly paths?: readonly string[];
}

export interface TufTargetInfo {
  readonly path: string;
  readonly length: number;
  readonly sha256: string;
  readonly custom: unknown;
  readonly role: string;
  /** Where it is stored, relative to `repository/targets`. */
  readonly file: string;
}

export interface TufRepoInfo {
  readonly roles: Readonly<Record<string, TufRoleInfo>>;
  readonly targets: readonly TufTargetInfo[];
}

/** A target's content: a file on disk, or bytes the wrapper writes to a file first. */
export type TufTargetSource = { readonly file: string } | { readonly content: string | Uint8Array };

/** One repository in `dir`; each method runs one tuf-repo command and throws with its stderr line. */
export class TufTestRepo {
  readonly metadataDir: string;
  readonly targetsDir: string;
  private uploads = 0;

  private constructor(readonly dir: string) {
    this.metadataDir = join(dir, 'repository', 'metadata');
    this.targetsDir = join(dir, 'repository', 'targets');
  }

  /** Makes and publishes version 1 of every role in `dir` (which must not hold a repository yet). */
  static init(dir: string, options: TufInitOptions = {}): TufTestRepo {
    const repo = new TufTestRepo(dir);
    const d = options.delegate;
    repo.run('init', [
      ...flag('expires-days', options.expiresDays),
      ...flag('root-keys', options.rootKeys),
      ...flag('root-threshold', options.rootThreshold),
      ...flag('targets-keys', options.targetsKeys),
      ...flag('targets-threshold', options.targetsThreshold),
      ...(d ? ['--delegate', d.name, '--delegate-paths', d.paths.join(',')] : []),
      ...flag('delegate-keys', d?.keys),
      ...flag('delegate-threshold', d?.threshold),
    ]);
    return repo;
  }

  /** `init` in a fresh temp dir; `remove()` deletes it. */
  static inTempDir(options: TufInitOptions = {}): TufTestRepo {
    return TufTestRepo.init(mkdtempSync(join(tmpdir(), 'tuf-repo-')), options);
  }

  /** Lists a target in `targets` (or `role`), staged until publish. */
  addTarget(
    path: string,
    source: TufTargetSource,
    options: { custom?: unknown; role?: string; outsideDelegation?: boolean } = {},
  ): void {
    let file: string;
    if ('file' in source) {
      file = source.file;
    } else {
      this.uploads += 1;
      file = join(this.dir, `upload-${this.uploads}-${basename(path)}`);
      writeFileSync(file, source.content);
    }
    this.run('add-target', [
      '--path',
      path,
      '--file',
      file,
      ...(options.custom === undefined ? [] : ['--custom', JSON.stringify(options.custom)]),
      ...flag('role', options.role),
      ...(options.outsideDelegation === true ? ['--outside-delegation'] : []),
    ]);
  }

  /** Drops a target from whichever role lists it (or `role`), staged until publish. */
  removeTarget(path: string, role?: string): void {
    this.run('remove-target', ['--path', path, ...flag('role', role)]);
  }

  /**
   * New versions of the changed targets roles, then snapshot and timestamp. `signWith` signs a
   * role with only its first K keys (and republishes it even if unchanged), e.g. `{ targets: 1 }`.
   */
  publish(options: { signWith?: Readonly<Record<string, number>> } = {}): void {
    const signWith = Object.entries(options.signWith ?? {}).map(([role, k]) => `${role}=${k}`);
    this.run('publish', signWith.length > 0 ? ['--sign-with', signWith.join(',')] : []);
  }

  /** Root N+1 with fresh keys, signed by old and new root keys as asked. */
  rotateRoot(options: TufRotateRootOptions = {}): void {
    this.run('rotate-root', [
      ...flag('new-keys', options.newKeys),
      ...flag('threshold', options.threshold),
      ...flag('sign-old', options.signOld),
      ...flag('sign-new', options.signNew),
      ...flag('rotate-role', options.rotateRoles?.join(',')),
    ]);
  }

  /** Sets a role's expiry and publishes it (with a new snapshot and timestamp where needed). */
  expire(role: string, at: Date | string): void {
    this.run('expire', ['--role', role, '--at', typeof at === 'string' ? at : rfc3339(at)]);
  }

  /**
   * A new version of timestamp (or snapshot and timestamp) with nothing else changed; `toVersion`
   * sets the version it gets instead of the next one (fast-forward attacks and their recovery).
   */
  bump(role: 'timestamp' | 'snapshot', options: { toVersion?: number } = {}): void {
    this.run('bump', ['--role', role, ...flag('to-version', options.toVersion)]);
  }

  info(): TufRepoInfo {
    return JSON.parse(this.run('info', [])) as TufRepoInfo;
  }

  /** Path of a published metadata file: `N.role.json`, or `timestamp.json` without a version. */
  metadataPath(role: string, version?: number): string {
    return join(this.metadataDir, version === undefined ? `${role}.json` : `${version}.${role}.json`);
  }

  /** A published metadata file, parsed. */
  metadata(role: string, version?: number): TufMetadata {
    return JSON.parse(readFileSync(this.metadataPath(role, version), 'utf8')) as TufMetadata;
  }

  /** The root a client starts from (its out-of-band trust), as bytes: `1.root.json` by default. */
  trustedRoot(version = 1): Buffer {
    return readFileSync(this.metadataPath('root', version));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private run(command: string, args: readonly string[]): string {
    try {
      return execFileSync(tufRepoTool(), [command, '--dir', this.dir, ...args], {
        encoding: 'utf8',
        timeout: TOOL_TIMEOUT_MS,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      const stderr = (error as { stderr?: string }).stderr?.trim();
      throw new Error(stderr || `tuf-repo ${command} failed: ${(error as Error).message}`, { cause: error });
    }
  }
}

/** A metadata file as JSON, loosely typed: tests read what they assert on. */
export interface TufMetadata {
  readonly signed: { readonly _type: string; readonly version: number; readonly expires: string } & Record<
    string,
    unknown
  >;
  readonly signatures: readonly { readonly keyid: string; readonly sig: string }[];
}

function flag(name: string, value: string | number | undefined): string[] {
  return value === undefined ? [] : [`--${name}`, String(value)];
}

/** RFC 3339 in whole seconds, as TUF writes expiry times. */
function rfc3339(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
