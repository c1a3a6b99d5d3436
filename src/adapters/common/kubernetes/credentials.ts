import { createHash } from 'node:crypto';
import { ClusterError } from '../../../domain/common/port-errors.js';
import { stat } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { CredentialError } from './credential-error.js';
import type { ExecCredentialSource } from './exec-credential.js';
import { readBounded } from './kubeconfig-files.js';
import type { UserConfig } from './kubeconfig-user.js';
import { messageOf } from '../../../domain/common/message-of.js';

/** A token file is read again when what was read is older than this (client-go's period), and at once after a 401. */
export const TOKEN_FILE_MAX_AGE_MS = 60_000;

/** What one request sends: the authorization header and the client certificate. */
export interface AuthState {
  readonly headers: Readonly<Record<string, string>>;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** The same id means the same client certificate and key: connections are rebuilt only when it changes. */
  readonly tlsId: string;
  /** Moves on whenever what is sent changes. */
  readonly version: number;
}

interface ClientPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/**
 * The credentials of every request, kept current as they rotate:
 * - a token file (kubeconfig `tokenFile`, the in-cluster service-account token) is read again
 *   once what was read is a minute old, and at once after the server answered 401; when it
 *   cannot be read the last token read is kept (and before any, the inline `token`);
 * - client certificate and key files are checked (inode, size, modification time) before every
 *   request and read again when either changed; a new pair is taken only when the key matches
 *   the certificate, so a rotation caught half-way keeps the pair that worked;
 * - an exec plugin's answer is kept until it expires or the server refuses it;
 * - inline tokens, certificates and basic auth never change.
 */
export class Credentials {
  private readonly tokenFile: TokenFile | null;
  private readonly certFiles: CertFiles | null;
  private state: AuthState | null = null;

  constructor(
    private readonly user: UserConfig,
    private readonly exec: ExecCredentialSource | null,
    /** Monotonic: a token file's age is a duration. */
    monotonicMs: () => number,
  ) {
    this.tokenFile = user.tokenFile === undefined ? null : new TokenFile(user.tokenFile, user.token, monotonicMs);
    this.certFiles =
      user.certFile === undefined || user.keyFile === undefined ? null : new CertFiles(user.certFile, user.keyFile);
  }

  /** What to send now (re-reading what is due); a CredentialError when there is nothing to send. */
  async current(): Promise<AuthState> {
    const [authorization, pair] = await Promise.all([this.authorization(), this.clientPair()]);
    const headers: Record<string, string> = authorization === undefined ? {} : { authorization };
    const tlsId =
      pair === null ? '' : createHash('sha256').update(pair.cert).update('\0').update(pair.key).digest('hex');
    const previous = this.state;
    if (previous !== null && previous.headers['authorization'] === authorization && previous.tlsId === tlsId)
      return previous;
    this.state = { headers, ...(pair ?? {}), tlsId, version: (previous?.version ?? 0) + 1 };
    return this.state;
  }

  /**
   * The server answered 401 to `used`: everything that can change is read again now (the
   * plugin runs again). True when the next request would send something else, so retrying is
   * worth it.
   */
  async rejected(used: AuthState): Promise<boolean> {
    // Several requests refused together re-read once: the first one moves the state on.
    if (this.state === null || this.state.version === used.version) {
      this.tokenFile?.invalidate();
      this.certFiles?.invalidate();
      this.exec?.invalidate();
    }
    return (await this.current()).version !== used.version;
  }

  private async authorization(): Promise<string | undefined> {
    if (this.exec !== null) {
      const token = (await this.exec.get()).token;
      return token === undefined ? undefined : `Bearer ${token}`;
    }
    if (this.tokenFile !== null) return `Bearer ${await this.tokenFile.read()}`;
    if (this.user.token !== undefined) return `Bearer ${this.user.token}`;
    return this.user.basic;
  }

  private async clientPair(): Promise<ClientPair | null> {
    if (this.exec !== null) {
      const { cert, key } = await this.exec.get();
      if (cert !== undefined && key !== undefined) return { cert, key };
    }
    if (this.certFiles !== null) return this.certFiles.read();
    const { certData, keyData } = this.user;
    return certData === undefined || keyData === undefined ? null : { cert: certData, key: keyData };
  }
}

class TokenFile {
  private token: string | null = null;
  private readAtMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly path: string,
    private readonly fallback: string | undefined,
    private readonly monotonicMs: () => number,
  ) {}

  async read(): Promise<string> {
    const nowMs = this.monotonicMs();
    if (this.token !== null && nowMs - this.readAtMs < TOKEN_FILE_MAX_AGE_MS) return this.token;
    try {
      const token = (await readBounded(this.path)).toString('utf8').trim();
      if (token === '') throw new CredentialError(`the token file ${this.path} is empty`);
      this.token = token;
      this.readAtMs = nowMs;
      return token;
    } catch (error) {
      // Mid-rotation or briefly unreadable: what worked last is still the best guess (kubectl does the same).
      const kept = this.token ?? this.fallback;
      if (kept !== undefined) return kept;
      throw error instanceof CredentialError ? error : new CredentialError(messageOf(error));
    }
  }

  invalidate(): void {
    this.readAtMs = Number.NEGATIVE_INFINITY;
  }
}

class CertFiles {
  private pair: ClientPair | null = null;
  private fingerprint = '';

  constructor(
    private readonly certPath: string,
    private readonly keyPath: string,
  ) {}

  async read(): Promise<ClientPair> {
    const fingerprint = await this.fingerprintNow();
    if (this.pair !== null && fingerprint === this.fingerprint) return this.pair;
    try {
      const [cert, key] = await Promise.all([readBounded(this.certPath), readBounded(this.keyPath)]);
      // Throws when the key does not belong to the certificate: a rotation seen between its two writes.
      createSecureContext({ cert, key });
      this.pair = { cert, key };
      this.fingerprint = fingerprint;
    } catch (error) {
      if (this.pair === null)
        throw new CredentialError(
          error instanceof CredentialError || error instanceof ClusterError
            ? error.message
            : `the client certificate ${this.certPath} and key ${this.keyPath} do not make a usable pair`,
        );
    }
    return this.pair;
  }

  invalidate(): void {
    this.fingerprint = '';
  }

  private async fingerprintNow(): Promise<string> {
    const parts = await Promise.all(
      [this.certPath, this.keyPath].map((path) =>
        stat(path, { bigint: true }).then(
          (info) => `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`,
          () => 'missing',
        ),
      ),
    );
    return parts.join('/');
  }
}
