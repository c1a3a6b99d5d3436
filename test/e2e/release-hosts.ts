// Where the end-to-end daemon downloads its releases from: a plain loopback server (the operation
// names a digest), or a go-tuf repository the daemon trusts (signed releases: the operation names
// no digest, the signed metadata binds the bytes).
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { serveTufRepo, type TufMirror } from '../support/tuf/serve-tuf-repo.js';
import { TufTestRepo } from '../support/tuf/tuf-repo-tool.js';

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

/** Where the installer puts the repository's first root on a host with signed releases. */
const ROOT_FILE = '/etc/aks-flex-node/trust/root.json';

export interface ReleaseHost {
  /** The configuration a daemon needs to download from here (merged into the host's). */
  readonly config: Record<string, unknown>;
  /** Writes what the host must hold before the daemon starts (`path` maps a host path into the sandbox). */
  install(path: (hostPath: string) => string): void;
  /** Serves `archive` as the release `version`; the MachineOperation parameters that name it. */
  publish(archive: Uint8Array, version: string, arch: string | null, query: string): Record<string, string>;
  /** Serves other bytes where the release `version` was published, as a compromised release host would. */
  swap(archive: Uint8Array, version: string, other: Uint8Array): void;
  close(): Promise<void>;
}

export async function plainReleaseHost(): Promise<ReleaseHost> {
  const server: HostileServer = await startHostileServer();
  let published = 0;
  return {
    config: {},
    install: () => undefined,
    publish(archive, version, _arch, query) {
      published += 1;
      const path = `/agent-${published}-${version}.tar.gz`;
      server.route(path, serve(archive));
      return { downloadURL: `${server.url(path)}?${query}`, sha256: sha256(archive) };
    },
    swap: () => {
      throw new Error('the plain release host has no swap: the digest in the operation would catch it');
    },
    close: () => server.close(),
  };
}

export async function signedReleaseHost(): Promise<ReleaseHost> {
  const repo = TufTestRepo.inTempDir({ targetsKeys: 3, targetsThreshold: 2 });
  const mirror: TufMirror = await serveTufRepo(repo.dir);
  const pathOf = (version: string) => `releases/agent-${version}.tar.gz`;
  return {
    config: {
      trust: {
        mode: 'tuf',
        rootFile: ROOT_FILE,
        metadataUrl: `${mirror.metadataUrl}/`,
        targetsUrl: `${mirror.targetsUrl}/`,
      },
      // The loopback repository speaks plain HTTP; the signatures bind the bytes.
      artifact: { allowHttp: true },
    },
    install(path) {
      mkdirSync(dirname(path(ROOT_FILE)), { recursive: true });
      writeFileSync(path(ROOT_FILE), repo.trustedRoot());
      chmodSync(path(ROOT_FILE), 0o644);
    },
    publish(archive, version, arch, query) {
      repo.addTarget(pathOf(version), { content: archive }, { custom: { version, arch } });
      repo.publish();
      return { downloadURL: `${mirror.targetsUrl}/${pathOf(version)}?${query}` };
    },
    swap(archive, version, other) {
      // Consistent snapshots: the target is stored as <dir>/<sha256>.<name>.
      mirror.override(`/targets/releases/${sha256(archive)}.agent-${version}.tar.gz`, { body: other });
    },
    async close() {
      await mirror.close();
      repo.remove();
    },
  };
}
