import type { ProcessRunner, RunOutcome } from '../../../ports/common/process-runner.js';
import { CredentialError } from './credential-error.js';
import { asRecord, text } from './kubeconfig-files.js';
import type { ExecConfig } from './kubeconfig-user.js';

/** A plugin that has not answered in this long is killed (with its whole process tree). */
export const EXEC_TIMEOUT_MS = 30_000;
const EXEC_OUTPUT_MAX_BYTES = 1024 * 1024;

/** What a plugin run gave: a token, or a client certificate and key (PEM), and until when. */
export interface ExecResult {
  readonly token?: string;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  /** `null`: no expiry given, kept until the server refuses it. */
  readonly expiresAtMs: number | null;
}

export interface ExecSourceOptions {
  readonly runner: ProcessRunner;
  readonly nowMs: () => number;
  readonly timeoutMs: number;
  /** The daemon's environment, which the plugin inherits (with the kubeconfig's `env` on top). */
  readonly env: NodeJS.ProcessEnv;
  /** `spec.cluster` of KUBERNETES_EXEC_INFO, when the kubeconfig sets `provideClusterInfo`. */
  readonly cluster: Readonly<Record<string, unknown>> | null;
}

/**
 * An exec credential plugin (`client.authentication.k8s.io/v1` or `v1beta1` ExecCredential), as
 * kubectl runs one: the command with its args and env, KUBERNETES_EXEC_INFO saying it is not
 * interactive, stdin closed. Its answer is kept until its `expirationTimestamp` (without one,
 * until the server refuses it), then the plugin runs again; a refused credential makes it run
 * again at once. One run at a time: concurrent requests share it. A run is bounded by
 * `timeoutMs`. Neither its output nor its stderr ever reaches a log or an error message: both
 * may hold secrets, so failures say only how the plugin ended.
 */
export class ExecCredentialSource {
  private cached: ExecResult | null = null;
  private running: Promise<ExecResult> | null = null;

  constructor(
    private readonly config: ExecConfig,
    private readonly options: ExecSourceOptions,
  ) {}

  get(): Promise<ExecResult> {
    if (this.running !== null) return this.running;
    const cached = this.cached;
    if (cached !== null && (cached.expiresAtMs === null || this.options.nowMs() < cached.expiresAtMs))
      return Promise.resolve(cached);
    const run = this.run().then((result) => (this.cached = result));
    this.running = run;
    const clear = (): void => {
      if (this.running === run) this.running = null;
    };
    run.then(clear, clear);
    return run;
  }

  /** The server refused what the plugin gave: the next request runs it again. */
  invalidate(): void {
    this.cached = null;
  }

  private async run(): Promise<ExecResult> {
    const { config, options } = this;
    const info = {
      apiVersion: config.apiVersion,
      kind: 'ExecCredential',
      spec: { interactive: false, ...(options.cluster === null ? {} : { cluster: options.cluster }) },
    };
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(options.env)) if (value !== undefined) env[name] = value;
    const outcome = await options.runner.run({
      command: config.command,
      args: config.args,
      timeoutMs: options.timeoutMs,
      outputMaxBytes: EXEC_OUTPUT_MAX_BYTES,
      env: { ...env, ...config.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) },
    });
    if (outcome.kind !== 'exited' || outcome.exitCode !== 0) throw new CredentialError(this.failureOf(outcome));
    // An answer that is already expired is still used once: the next request runs the plugin again.
    return parseExecCredential(outcome.stdout, config);
  }

  private failureOf(outcome: RunOutcome): string {
    const plugin = `the exec credential plugin ${this.config.command}`;
    const hint = this.config.installHint === undefined ? '' : ` (${this.config.installHint})`;
    switch (outcome.kind) {
      case 'spawn-failed':
        return `${plugin} cannot be started (${outcome.code})${hint}`;
      case 'timed-out':
        return `${plugin} did not answer within ${this.options.timeoutMs} ms and was killed`;
      case 'signalled':
        return `${plugin} was killed by ${outcome.signal}; its output is not logged`;
      case 'exited':
        return `${plugin} exited with status ${outcome.exitCode}; its output is not logged (run it by hand to see why)`;
    }
  }
}

/** The credential a plugin printed; nothing of it is quoted when it is unusable. */
function parseExecCredential(stdout: string, config: ExecConfig): ExecResult {
  const unusable = (why: string): never => {
    throw new CredentialError(`the exec credential plugin ${config.command} ${why}`);
  };
  let document: unknown;
  try {
    document = JSON.parse(stdout);
  } catch {
    unusable('printed no JSON');
  }
  const credential = asRecord(document);
  if (credential['kind'] !== 'ExecCredential' || credential['apiVersion'] !== config.apiVersion)
    unusable(`printed no ExecCredential of ${config.apiVersion}`);
  const status = asRecord(credential['status']);
  const token = text(status['token']);
  const certPem = text(status['clientCertificateData']);
  const keyPem = text(status['clientKeyData']);
  if ((certPem === undefined) !== (keyPem === undefined))
    unusable('printed a client certificate without its key, or a key without its certificate');
  if (token === undefined && certPem === undefined) unusable('printed neither a token nor a client certificate');
  const expiry = status['expirationTimestamp'];
  let expiresAtMs: number | null = null;
  if (expiry !== undefined && expiry !== null) {
    expiresAtMs = typeof expiry === 'string' ? Date.parse(expiry) : Number.NaN;
    if (Number.isNaN(expiresAtMs)) unusable('printed an expirationTimestamp that is not a time');
  }
  return {
    ...(token === undefined ? {} : { token }),
    ...(certPem === undefined || keyPem === undefined
      ? {}
      : { cert: Buffer.from(certPem, 'utf8'), key: Buffer.from(keyPem, 'utf8') }),
    expiresAtMs,
  };
}
