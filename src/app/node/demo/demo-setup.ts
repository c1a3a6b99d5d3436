import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import { parseConfigValue } from '../config/parse-config.js';
import { unwrap } from '../../common/failure-signal.js';
import type { HostIdentity } from '../host-identity.js';
import type { Upgrader } from '../upgrader.js';
import { createUpgrader } from '../composition/create-upgrader.js';
import { demoAgentElf, type DemoBehaviour } from './demo-agent-elf.js';
import type { DemoPlatform } from './demo-platforms.js';
import type { DemoRelease, DemoReleaseServer } from './demo-releases.js';
import { DemoSignedRepo } from './demo-signed-repo.js';
import { quietRecoveryIdentity } from './quiet-recovery.js';

/**
 * The releases the publisher signs. 2.1.0 is then swapped on the release host (someone with write
 * access there, not the publisher), 3.0.0 crashes on start, and 3.1.0 runs for 4 s, long enough to
 * pass the stability gate, then crashes: only the watch window catches it.
 */
const VERSIONS: readonly { readonly version: string; readonly behaviour: DemoBehaviour }[] = [
  { version: '1.0.0', behaviour: 'healthy' },
  { version: '2.0.0', behaviour: 'healthy' },
  { version: '2.1.0', behaviour: 'healthy' },
  { version: '3.0.0', behaviour: 'crash-on-start' },
  { version: '3.1.0', behaviour: 'crash-later' },
];

/** Where the agent's installer puts the publisher's first root: a root-owned file, never from the cluster. */
const ROOT_FILE = '/etc/aks-flex-node/trust/root.json';

/**
 * The demo's sandbox host (the platform adds root, paths and service): health settles in 1.5 s,
 * then a 6-second watch window (10 minutes by default) must pass before a release is kept.
 */
const DEMO_CONFIG = {
  agent: { mode: 'sidecar', args: ['agent'] },
  health: { timeoutMs: 10_000, stableMs: 1_500, pollMs: 250, watchMs: 6_000 },
  container: { manager: 'none' },
  cluster: { manager: 'none' },
  // The loopback release server speaks plain HTTP; the signatures bind the bytes.
  artifact: { allowHttp: true },
};

export interface DemoSetup {
  readonly upgrader: Upgrader;
  /** By version: 1.0.0, 2.0.0, 2.1.0 (swapped after signing), 3.0.0 (crashes on start), 3.1.0 (crashes later). */
  readonly published: readonly DemoRelease[];
}

export interface DemoSetupOptions {
  readonly identity: HostIdentity;
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * The signed repository on the release server, the sandbox's configuration file (trusting the
 * repository's first root) and the use cases over them.
 */
export async function setUpDemo(
  options: DemoSetupOptions,
  platform: DemoPlatform,
  sandbox: string,
  releases: DemoReleaseServer,
): Promise<DemoSetup> {
  const platformConfig = platform.configFor(sandbox);
  // The supervisor re-roots every path under the sandbox; systemd's configuration names them whole.
  const onHost = (path: string): string => (platformConfig['root'] === sandbox ? path : join(sandbox, path));
  const trust = {
    mode: 'tuf',
    rootFile: onHost(ROOT_FILE),
    metadataUrl: releases.metadataUrl,
    targetsUrl: releases.targetsUrl,
  };
  const configValue = { ...DEMO_CONFIG, ...platformConfig, trust };
  const config = unwrap(parseConfigValue(configValue, 'the demo configuration'));
  const member = config.agent.member.replace('{arch}', 'amd64');
  const published: DemoRelease[] = [];
  for (const { version, behaviour } of VERSIONS)
    published.push(await releases.publish(member, version, demoAgentElf(version, behaviour), behaviour));
  const metadata = new DemoSignedRepo(options.clock.nowMs()).publish(
    published.map((release) => ({
      path: release.targetPath,
      bytes: release.archive,
      version: release.version,
      arch: 'amd64',
    })),
  );
  releases.serveMetadata(metadata);
  writeSandboxFile(join(sandbox, ROOT_FILE), metadata.get('1.root.json') ?? Buffer.alloc(0), 0o644);
  // Where `--root SANDBOX` finds it: the on-failure hook's `recover --root SANDBOX` then runs on
  // the demo's configuration too, not on the built-in profile.
  writeSandboxFile(
    join(sandbox, 'etc/aks-flex-node/agent-upgrade.json'),
    `${JSON.stringify(configValue, null, 2)}\n`,
    0o600,
  );
  const upgrader = unwrap(
    createUpgrader({ config, identity: quietRecoveryIdentity(options.identity, sandbox), logger: options.logger }),
  );
  return { upgrader, published };
}

function writeSandboxFile(path: string, content: string | Uint8Array, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content, { mode });
}
