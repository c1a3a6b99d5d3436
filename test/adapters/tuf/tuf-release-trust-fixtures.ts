import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { AxiosArtifactSource } from '../../../src/adapters/common/http/axios-artifact-source.js';
import { TufReleaseTrust } from '../../../src/adapters/common/tuf/tuf-release-trust.js';
import { SystemClock } from '../../../src/adapters/common/runtime/system-clock.js';
import type { Clock } from '../../../src/ports/common/clock.js';
import { serveTufRepo, type TufMirror } from '../../support/tuf/serve-tuf-repo.js';
import { type TufInitOptions, TufTestRepo } from '../../support/tuf/tuf-repo-tool.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

export const AGENTS = { name: 'agents', paths: ['agent/*/*'] };
export const RELEASE = { version: '2.0.0', arch: 'amd64' };

/** A go-tuf repository with a 2-of-3 targets threshold and a delegation, served on loopback. */
export async function publishedRepository(
  options: TufInitOptions = {},
): Promise<{ repo: TufTestRepo; mirror: TufMirror }> {
  const repo = TufTestRepo.inTempDir({ targetsKeys: 3, targetsThreshold: 2, delegate: AGENTS, ...options });
  cleanups.push(() => repo.remove());
  repo.addTarget('releases/agent-2.0.0.tar.gz', { content: 'release two' }, { custom: RELEASE });
  repo.addTarget(
    'agent/2.1.0/agent.tar.gz',
    { content: 'release 2.1' },
    {
      custom: { version: '2.1.0', arch: 'amd64' },
      role: 'agents',
    },
  );
  repo.publish();
  const mirror = await serveTufRepo(repo.dir);
  cleanups.push(() => mirror.close());
  return { repo, mirror };
}

export interface TrustedNode {
  readonly trust: TufReleaseTrust;
  readonly cacheDir: string;
  readonly rootFile: string;
  /** Every file of the trusted directory with its bytes, to show a refusal changed nothing. */
  snapshot(): Record<string, string>;
}

/** A node that installed `repo`'s first root and keeps its trusted metadata in a temp dir. */
export function trustedNode(
  repo: TufTestRepo,
  mirror: TufMirror,
  options: {
    rootMode?: number;
    beforeDurableStep?: (step: string) => void;
    trustedFiles?: Record<string, string>;
    clock?: Clock;
  } = {},
): TrustedNode {
  const home = mkdtempSync(join(tmpdir(), 'tuf-node-'));
  cleanups.push(() => rmSync(home, { recursive: true, force: true }));
  const rootFile = join(home, 'root.json');
  writeFileSync(rootFile, repo.trustedRoot());
  chmodSync(rootFile, options.rootMode ?? 0o644);
  const cacheDir = join(home, 'trust');
  if (options.trustedFiles !== undefined) {
    mkdirSync(cacheDir);
    for (const [name, text] of Object.entries(options.trustedFiles)) writeFileSync(join(cacheDir, name), text);
  }
  const trust = new TufReleaseTrust(new AxiosArtifactSource(), {
    metadataUrl: `${mirror.metadataUrl}/`,
    cacheDir,
    rootFile,
    timeoutMs: 10_000,
    idleTimeoutMs: 5_000,
    clock: options.clock ?? new SystemClock(),
    ...(options.beforeDurableStep === undefined ? {} : { beforeDurableStep: options.beforeDurableStep }),
  });
  const snapshot = (): Record<string, string> => {
    let names: string[];
    try {
      names = readdirSync(cacheDir).sort();
    } catch {
      return {};
    }
    return Object.fromEntries(names.map((name) => [name, readFileSync(join(cacheDir, name), 'utf8')]));
  };
  return { trust, cacheDir, rootFile, snapshot };
}

/** The code of what `promise` rejects with, or 'resolved'. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'resolved';
  } catch (error) {
    return (error as { code?: string }).code ?? `uncoded ${String(error)}`;
  }
}
