import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { HostIdentity } from '../host-identity.js';

/**
 * The identity the demo's upgrader runs with: the service manager's on-failure hook still runs
 * `recover` through this executable, as in production, but through a wrapper in the sandbox that
 * discards the command's one-line report. The supervisor sends the hook's output to its own
 * stderr — in the demo, the terminal — where "No pending upgrade; nothing to recover." would land
 * in the middle of the timeline (the demo's upgrades are direct, so there is never one).
 * Failures and warnings still reach stderr.
 */
export function quietRecoveryIdentity(identity: HostIdentity, sandbox: string): HostIdentity {
  const invocation = identity.invocation;
  if (invocation === undefined) return identity;
  const wrapper = join(sandbox, 'demo-recover');
  const quoted = `'${invocation.executable.replace(/'/g, `'\\''`)}'`;
  writeFileSync(wrapper, `#!/bin/sh\nexec ${quoted} "$@" >/dev/null\n`, { mode: 0o755 });
  return { ...identity, invocation: { ...invocation, executable: wrapper } };
}
