import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { TrustError } from '../../../domain/common/port-errors.js';

/** Where `markRootProbed` keeps its hint (a dot file: never taken for metadata). */
const ROOT_PROBED_FILE = '.root-probed-at';

/** The top-level roles in the order a refresh trusts them: each one is checked against the ones before. */
const TOP_ROLES = ['root', 'timestamp', 'snapshot', 'targets'] as const;

/**
 * The directory of metadata this node has verified (trust.cacheDir). tuf-js writes its files in
 * place as it verifies them; a crash there could leave a half-written root.json and the node would
 * trust nothing. So a refresh runs in a scratch copy, and only verified files come back, each by
 * write, fsync and rename, in trust order (root first): after a crash every file is the old or the
 * new verified one, and no role's version goes back.
 */
export class TrustedMetadataDir {
  /** What each scratch directory started from: the trusted files as they were when it was staged. */
  private readonly stagedFrom = new Map<string, ReadonlyMap<string, Buffer>>();

  /**
   * `beforeDurableStep` runs before each change of the trusted directory (a temp written, a
   * rename, a directory sync): the crash-point tests stop a refresh there, as a power loss would.
   */
  constructor(
    readonly dir: string,
    private readonly initialRootFile: string,
    private readonly beforeDurableStep: (step: string) => void = () => undefined,
  ) {}

  /**
   * Whether a first refresh could start: a root is trusted already, or the installed one can be
   * read and is a TUF root. Throws the TrustError the refresh would meet, before there is one.
   */
  checkRootAvailable(): void {
    if (this.files().includes('root.json')) return;
    const bytes = this.readInitialRoot();
    let type: unknown;
    try {
      type = (JSON.parse(bytes.toString('utf8')) as { signed?: { _type?: unknown } }).signed?._type;
    } catch {
      type = undefined;
    }
    if (type !== 'root' || signedPart(bytes) === null)
      throw new TrustError(
        'E_TRUST_METADATA',
        `the initial trusted root ${this.initialRootFile} is not TUF root metadata`,
      );
  }

  /** A scratch directory holding a copy of the trusted files (the installed root on first use). */
  stage(): string {
    mkdirSync(this.dir, { recursive: true, mode: 0o755 });
    this.sweepAbandoned();
    const scratch = join(this.dir, `.refresh-${process.pid}-${randomBytes(4).toString('hex')}`);
    mkdirSync(scratch, { mode: 0o700 });
    const trusted = new Map(this.files().map((name) => [name, readFileSync(join(this.dir, name))]));
    if (!trusted.has('root.json')) writeFileDurably(join(scratch, 'root.json'), this.readInitialRoot());
    for (const [name, bytes] of trusted) writeFileDurably(join(scratch, name), bytes);
    this.stagedFrom.set(scratch, trusted);
    return scratch;
  }

  /** Brings the scratch directory's verified files back, root first, and removes the scratch. */
  commit(scratch: string): void {
    const staged = metadataFiles(scratch);
    const ordered = [...TOP_ROLES.map((role) => `${role}.json`).filter((name) => staged.includes(name))];
    ordered.push(...staged.filter((name) => !ordered.includes(name)).sort());
    const before = this.stagedFrom.get(scratch) ?? new Map<string, Buffer>();
    for (const name of ordered) {
      const bytes = readFileSync(join(scratch, name));
      if (!this.replaces(name, bytes, before.get(name))) continue;
      const temp = join(this.dir, `.${name}.${randomBytes(4).toString('hex')}.tmp`);
      this.beforeDurableStep(`write ${name}`);
      writeFileDurably(temp, bytes);
      this.beforeDurableStep(`rename ${name}`);
      renameSync(temp, join(this.dir, name));
      this.beforeDurableStep(`sync after ${name}`);
      syncDirectory(this.dir);
    }
    this.discard(scratch);
  }

  discard(scratch: string): void {
    this.stagedFrom.delete(scratch);
    rmSync(scratch, { recursive: true, force: true });
  }

  /**
   * When a refresh last looked for root N+1 (wall-clock ms, as written by `markRootProbed`), or
   * null when unknown. A hint, not trusted metadata: lost or garbled, the next refresh probes.
   */
  rootProbedAtMs(): number | null {
    try {
      const value = Number(readFileSync(join(this.dir, ROOT_PROBED_FILE), 'utf8'));
      return Number.isSafeInteger(value) ? value : null;
    } catch {
      return null;
    }
  }

  /**
   * Best effort: the refresh it follows has committed, and a hint that cannot be written (a full
   * disk) only makes the next refresh probe again, so it fails nothing.
   */
  markRootProbed(atMs: number): void {
    try {
      writeFileSync(join(this.dir, ROOT_PROBED_FILE), `${atMs}\n`, { mode: 0o644 });
    } catch {
      // the next refresh probes for root N+1
    }
  }

  /** The trusted file of one role, or null before it was first verified. */
  read(role: string): Buffer | null {
    try {
      return readFileSync(join(this.dir, `${encodeURIComponent(role)}.json`));
    } catch {
      return null;
    }
  }

  private files(): string[] {
    try {
      return metadataFiles(this.dir);
    } catch {
      return [];
    }
  }

  /**
   * Whether a verified file should replace the trusted one. While the trusted file is still what
   * this refresh started from, the verified one always does, even at a lower version: after a
   * rotation of the timestamp or snapshot keys, a fast-forwarded file the old key signed no longer
   * verifies, and the publisher's lower version must become the baseline that stops a rollback.
   * When another refresh (a `fetch` beside the daemon) replaced it meanwhile, the higher version
   * stays, so the slower refresh never puts back an older one.
   */
  private replaces(name: string, bytes: Buffer, stagedFrom: Buffer | undefined): boolean {
    let current: Buffer;
    try {
      current = readFileSync(join(this.dir, name));
    } catch {
      return true;
    }
    if (current.equals(bytes)) return false;
    if (stagedFrom !== undefined && current.equals(stagedFrom)) return true;
    return versionOf(bytes) >= versionOf(current);
  }

  /** Scratch directories and temps of refreshes whose process is gone (a crash, a kill). */
  private sweepAbandoned(): void {
    for (const name of readdirSync(this.dir)) {
      const owner = /^\.refresh-(\d+)-/.exec(name)?.[1];
      const abandoned = owner === undefined ? name.startsWith('.') && name.endsWith('.tmp') : !isRunning(Number(owner));
      if (abandoned) rmSync(join(this.dir, name), { recursive: true, force: true });
    }
  }

  /**
   * The root installed with the agent is the anchor of all trust: a file anyone but root could
   * have written is refused, as the layout refuses such entries.
   */
  private readInitialRoot(): Buffer {
    let fd: number;
    try {
      fd = openSync(this.initialRootFile, 'r');
    } catch (error) {
      throw new TrustError(
        'E_TRUST_METADATA',
        `the initial trusted root ${this.initialRootFile} cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    try {
      const stat = fstatSync(fd);
      const asRoot = process.getuid?.() === 0;
      if (!stat.isFile() || (asRoot && (stat.uid !== 0 || (stat.mode & 0o022) !== 0)))
        throw new TrustError(
          'E_TRUST_METADATA',
          `the initial trusted root ${this.initialRootFile} must be a regular file owned and writable only by root`,
        );
      return readFileSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}

/** A metadata file's signed version and expiry, or null when it does not parse as one. */
export function signedPart(bytes: Buffer): { version: number; expires: string } | null {
  try {
    const signed = (JSON.parse(bytes.toString('utf8')) as { signed?: { version?: unknown; expires?: unknown } }).signed;
    if (typeof signed?.version !== 'number' || typeof signed.expires !== 'string') return null;
    return { version: signed.version, expires: signed.expires };
  } catch {
    return null;
  }
}

/** The signed version of a metadata file; an unreadable one counts as the lowest. */
function versionOf(bytes: Buffer): number {
  return signedPart(bytes)?.version ?? -1;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Metadata files as tuf-js names them: "<role>.json", role names URI-encoded; never our temps. */
function metadataFiles(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.endsWith('.json') && !name.startsWith('.'));
}

function writeFileDurably(path: string, bytes: Uint8Array): void {
  const fd = openSync(path, 'wx', 0o644);
  try {
    let written = 0;
    while (written < bytes.byteLength) written += writeSync(fd, bytes, written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
