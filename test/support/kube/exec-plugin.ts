// A real exec credential plugin for tests: a shell script that prints a
// client.authentication.k8s.io/v1 ExecCredential built from files in its state folder, and counts
// its runs there. The test changes what the next run prints by writing those files.

import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SCRIPT = `#!/bin/sh
# Test exec credential plugin: its behaviour is the files in $PLUGIN_DIR.
dir="$PLUGIN_DIR"
echo run >> "$dir/calls"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info"
[ -f "$dir/stderr" ] && cat "$dir/stderr" >&2
[ -f "$dir/sleep" ] && sleep "$(cat "$dir/sleep")"
[ -f "$dir/exit" ] && exit "$(cat "$dir/exit")"
if [ -f "$dir/raw" ]; then cat "$dir/raw"; exit 0; fi
expiry=""
[ -f "$dir/ttl" ] && expiry=",\\"expirationTimestamp\\":\\"$(date -u -d "+$(cat "$dir/ttl") seconds" +%Y-%m-%dT%H:%M:%SZ)\\""
pem() { awk 'BEGIN { ORS = "" } { print $0 "\\\\n" }' "$1"; }
if [ -f "$dir/token" ]; then
  status="\\"token\\":\\"$(cat "$dir/token")\\""
else
  status="\\"clientCertificateData\\":\\"$(pem "$dir/cert")\\",\\"clientKeyData\\":\\"$(pem "$dir/key")\\""
fi
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{%s%s}}' "$status" "$expiry"
`;

export class ExecPlugin {
  readonly command: string;
  readonly stateDir: string;

  constructor(dir: string) {
    this.stateDir = join(dir, 'plugin-state');
    mkdirSync(this.stateDir, { recursive: true });
    this.command = join(dir, 'credential-plugin.sh');
    writeFileSync(this.command, SCRIPT, { mode: 0o755 });
  }

  /** The `exec` stanza of a kubeconfig user that runs this plugin. */
  stanza(extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: this.command,
      env: [{ name: 'PLUGIN_DIR', value: this.stateDir }],
      interactiveMode: 'Never',
      ...extra,
    };
  }

  /** How many times it ran. */
  calls(): number {
    const path = join(this.stateDir, 'calls');
    return existsSync(path)
      ? readFileSync(path, 'utf8')
          .split('\n')
          .filter((line) => line !== '').length
      : 0;
  }

  /** KUBERNETES_EXEC_INFO of its last run, parsed. */
  execInfo(): unknown {
    return JSON.parse(readFileSync(join(this.stateDir, 'exec-info'), 'utf8'));
  }

  /** Prints this token from now on (instead of a certificate). */
  token(token: string): this {
    this.set('token', token);
    return this;
  }

  /** Prints this client certificate and key (PEM files) from now on. */
  certificate(certPath: string, keyPath: string): this {
    this.clear('token');
    this.set('cert', readFileSync(certPath, 'utf8'));
    this.set('key', readFileSync(keyPath, 'utf8'));
    return this;
  }

  /** The credential expires this many seconds after the run (null: no expirationTimestamp). */
  ttlSeconds(seconds: number | null): this {
    return seconds === null ? this.clear('ttl') : this.set('ttl', String(seconds));
  }

  stderr(text: string | null): this {
    return text === null ? this.clear('stderr') : this.set('stderr', text);
  }

  sleepSeconds(seconds: number | null): this {
    return seconds === null ? this.clear('sleep') : this.set('sleep', String(seconds));
  }

  exitStatus(status: number | null): this {
    return status === null ? this.clear('exit') : this.set('exit', String(status));
  }

  /** Prints exactly this instead of a credential. */
  raw(output: string | null): this {
    return output === null ? this.clear('raw') : this.set('raw', output);
  }

  private set(name: string, content: string): this {
    writeFileSync(join(this.stateDir, name), content);
    return this;
  }

  private clear(name: string): this {
    rmSync(join(this.stateDir, name), { force: true });
    return this;
  }
}
