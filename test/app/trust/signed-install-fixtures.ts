import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach } from 'vitest';
import { hostArchitecture } from '../../../src/adapters/node/host/host-architecture.js';
import { MemoryServiceManager } from '../../../src/adapters/node/memory/memory-service-manager.js';
import { NodeFileSystem } from '../../../src/adapters/node/host/node-file-system.js';
import { FLEX_PROFILE } from '../../../src/app/node/config/profiles.js';
import type { Upgrader } from '../../../src/app/node/upgrader.js';
import { releaseArchive } from '../../support/archive/index.js';
import { makeScratch, snapshotTree, writeExecutable } from '../../support/real-tree.js';
import { RecordingLogger } from '../../support/recording-logger.js';
import { FLEX_SANDBOX_PATHS as P, sandboxUpgrader } from '../../support/sandbox-upgrader.js';
import { serveTufRepo, type TufMirror } from '../../support/tuf/serve-tuf-repo.js';
import { TufTestRepo } from '../../support/tuf/tuf-repo-tool.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export const ARCH = hostArchitecture();
const MEMBER = `aks-flex-node-linux-${ARCH}`;
const ROOT_FILE = '/etc/aks-flex-node/trust/root.json';
const CACHE_DIR = '/etc/aks-flex-node/agent-upgrade-trust';

export const agentScript = (version: string): string =>
  `#!/bin/sh\ncase "$1" in version) echo "aks-flex-node version v${version}";; *) exec sleep 30;; esac\n`;
export const archiveOf = (version: string): Uint8Array => releaseArchive(MEMBER, agentScript(version));

/** A go-tuf repository (2-of-3 targets keys) publishing the 2.0.0 release, on loopback. */
export async function signedRepository(expiresDays = 365): Promise<{ repo: TufTestRepo; mirror: TufMirror }> {
  const repo = TufTestRepo.inTempDir({ targetsKeys: 3, targetsThreshold: 2, expiresDays });
  cleanups.push(() => repo.remove());
  repo.addTarget(
    'releases/agent-2.0.0.tar.gz',
    { content: archiveOf('2.0.0') },
    { custom: { version: '2.0.0', arch: ARCH } },
  );
  repo.publish();
  const mirror = await serveTufRepo(repo.dir);
  cleanups.push(() => mirror.close());
  return { repo, mirror };
}

export interface SignedNode {
  readonly upgrader: Upgrader;
  readonly logger: RecordingLogger;
  readonly at: (path: string) => string;
  /** The host's files outside the trusted-metadata cache (which a refresh may update). */
  readonly tree: () => Record<string, string>;
}

/** A migrated sandbox host running 1.0.0 that trusts `repo`'s first root; `mirrors` are extra bases. */
export async function signedNode(
  repo: TufTestRepo,
  mirror: TufMirror,
  mirrors: readonly string[] = [],
): Promise<SignedNode> {
  const scratch = makeScratch();
  cleanups.push(() => scratch.cleanup());
  const at = (path: string): string => join(scratch.root, path);
  writeExecutable(at(P.entry), agentScript('1.0.0'));
  mkdirSync(dirname(at(ROOT_FILE)), { recursive: true });
  writeFileSync(at(ROOT_FILE), repo.trustedRoot());
  chmodSync(at(ROOT_FILE), 0o644);
  const services = new MemoryServiceManager({
    fs: new NodeFileSystem(),
    execStart: at(P.current),
    behaviourOf: () => 'healthy',
  });
  const trust = {
    mode: 'tuf' as const,
    rootFile: ROOT_FILE,
    metadataUrl: `${mirror.metadataUrl}/`,
    targetsUrl: `${mirror.targetsUrl}/`,
    mirrors,
    cacheDir: CACHE_DIR,
  };
  const logger = new RecordingLogger();
  const upgrader = sandboxUpgrader(
    scratch.root,
    { agent: { ...FLEX_PROFILE.agent, allowScripts: true }, trust },
    { serviceManager: services },
    logger,
  );
  const migrated = await upgrader.migrate();
  if (!migrated.ok) throw new Error(`migrate: ${migrated.failure.code}`);
  return { upgrader, logger, at, tree: () => snapshotTree(scratch.root, ['/run', CACHE_DIR]) };
}

export const TRUST_CACHE_DIR = CACHE_DIR;
