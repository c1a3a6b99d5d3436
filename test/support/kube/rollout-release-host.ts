// Where a rollout world's releases come from: archives on a plain loopback server, or targets of
// a go-tuf repository that the daemons and the controllers trust (signed releases).
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { releaseArchive } from '../archive/index.js';
import { startHostileServer } from '../http/hostile-server.js';
import { TEST_IDENTITY } from '../systemd/systemd-host.js';
import { serveTufRepo } from '../tuf/serve-tuf-repo.js';
import { TufTestRepo } from '../tuf/tuf-repo-tool.js';
import { publishRelease } from './rollout-controllers.js';
import type { MachineHostSetup } from './rollout-fleet.js';
import { sha256 } from './rollout-fleet.js';

type Binaries = { readonly amd64: Uint8Array; readonly arm64: Uint8Array };

export interface RolloutReleaseHost {
  /** The AgentRelease naming one archive per architecture, each holding the given binary. */
  release(name: string, version: string, binaries: Binaries): object;
  /** What each machine needs to download from here (a trusted root, the trust section). */
  readonly machines: MachineHostSetup;
  /** The controller's extra arguments (`--config` with the same trust settings), given a directory of its own. */
  controllerArgs(dir: string): readonly string[];
  /**
   * Serves other bytes of the same length where a release's artifact was published, as someone
   * with write access to the release host but no signing key would.
   */
  swap(name: string, arch: 'amd64' | 'arm64'): void;
  close(): Promise<void>;
}

export async function plainRolloutReleases(): Promise<RolloutReleaseHost> {
  const server = await startHostileServer();
  return {
    release: (name, version, binaries) => publishRelease(server, name, version, binaries),
    machines: { config: {}, install: () => undefined },
    controllerArgs: () => [],
    swap: () => {
      throw new Error('swap needs a signed world: the plain one would only show the digest check');
    },
    close: () => server.close(),
  };
}

export async function signedRolloutReleases(): Promise<RolloutReleaseHost> {
  const repo = TufTestRepo.inTempDir({ targetsKeys: 3, targetsThreshold: 2 });
  const mirror = await serveTufRepo(repo.dir);
  const archives = new Map<string, Uint8Array>();
  const trust = { mode: 'tuf', metadataUrl: `${mirror.metadataUrl}/`, targetsUrl: `${mirror.targetsUrl}/` };
  const writeRoot = (path: string) => {
    writeFileSync(path, repo.trustedRoot());
    chmodSync(path, 0o644);
  };
  return {
    release(name, version, binaries) {
      const artifacts = (['amd64', 'arm64'] as const).map((arch) => {
        const archive = releaseArchive(`aks-flex-node-linux-${TEST_IDENTITY.arch}`, binaries[arch]);
        const path = `releases/${name}-${arch}.tar.gz`;
        archives.set(`${name}-${arch}`, archive);
        repo.addTarget(path, { content: archive }, { custom: { version, arch } });
        return { arch, downloadURL: `${mirror.targetsUrl}/${path}`, sha256: sha256(archive) };
      });
      repo.publish();
      return {
        apiVersion: 'agent-upgrade.dev/v1alpha1',
        kind: 'AgentRelease',
        metadata: { name },
        spec: { version, artifacts },
      };
    },
    machines: {
      // The loopback repository speaks plain HTTP; the signatures bind the bytes.
      config: { trust: { ...trust, rootFile: '/etc/aks-flex-node/trust/root.json' }, artifact: { allowHttp: true } },
      install(root) {
        mkdirSync(join(root, 'etc/aks-flex-node/trust'), { recursive: true });
        writeRoot(join(root, 'etc/aks-flex-node/trust/root.json'));
      },
    },
    controllerArgs(dir) {
      mkdirSync(dir, { recursive: true });
      writeRoot(join(dir, 'root.json'));
      const config = {
        trust: { ...trust, rootFile: join(dir, 'root.json'), cacheDir: join(dir, 'trust') },
        artifact: { allowHttp: true },
      };
      writeFileSync(join(dir, 'controller.json'), JSON.stringify(config));
      return ['--config', join(dir, 'controller.json')];
    },
    swap(name, arch) {
      const archive = archives.get(`${name}-${arch}`);
      if (archive === undefined) throw new Error(`no release ${name} was published`);
      const bytes = Buffer.from(archive);
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0xff;
      // Consistent snapshots: the target is stored as <dir>/<sha256>.<name>.
      mirror.override(`/targets/releases/${sha256(archive)}.${name}-${arch}.tar.gz`, { body: bytes });
    },
    async close() {
      await mirror.close();
      repo.remove();
    },
  };
}
