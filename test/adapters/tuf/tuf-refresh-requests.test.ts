// What a refresh costs on the wire: with nothing new, one request (the timestamp, fetched first),
// in the process that probed for a new root last or in a new one (the probe's time is kept beside
// the metadata); anything published re-signs the timestamp, and then the root is probed at once as
// TUF's workflow does; a root changed alone is probed for within a day.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../../src/adapters/common/memory/memory-clock.js';
import { AxiosArtifactSource } from '../../../src/adapters/common/http/axios-artifact-source.js';
import { ROOT_PROBE_INTERVAL_MS, TufReleaseTrust } from '../../../src/adapters/common/tuf/tuf-release-trust.js';
import { publishedRepository, trustedNode } from './tuf-release-trust-fixtures.js';
import type { TufMirror } from '../../support/tuf/serve-tuf-repo.js';

const RELEASE_PATH = 'releases/agent-2.0.0.tar.gz';

/** The metadata requests made while `body` runs. */
async function requestsDuring(mirror: TufMirror, body: () => Promise<unknown>): Promise<string[]> {
  const before = mirror.requests.length;
  await body();
  return mirror.requests.slice(before).filter((path) => path.startsWith('/metadata/'));
}

describe('the requests of a refresh', () => {
  it('the first refresh probes for a new root; one with nothing new is the timestamp alone', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror, { clock: new MemoryClock() });
    const first = await requestsDuring(mirror, () => node.trust.lookup(RELEASE_PATH));
    // The timestamp comes first, once; then the probe for root 2, then what the timestamp names.
    expect(first.slice(0, 2)).toEqual(['/metadata/timestamp.json', '/metadata/2.root.json']);
    expect(first.filter((path) => path === '/metadata/timestamp.json')).toHaveLength(1);
    expect(await requestsDuring(mirror, () => node.trust.lookup(RELEASE_PATH))).toEqual(['/metadata/timestamp.json']);
    expect((await node.trust.lookup(RELEASE_PATH)).target).not.toBeNull();
  });

  it('a new process with nothing new costs the timestamp alone too; a wall clock stepped back probes again', async () => {
    const { repo, mirror } = await publishedRepository();
    const clock = new MemoryClock();
    const node = trustedNode(repo, mirror, { clock });
    await node.trust.lookup(RELEASE_PATH);
    const another = new TufReleaseTrust(new AxiosArtifactSource(), {
      metadataUrl: `${mirror.metadataUrl}/`,
      cacheDir: node.cacheDir,
      rootFile: node.rootFile,
      timeoutMs: 10_000,
      idleTimeoutMs: 5_000,
      clock,
    });
    expect(await requestsDuring(mirror, () => another.lookup(RELEASE_PATH))).toEqual(['/metadata/timestamp.json']);
    clock.stepWall(-60_000);
    expect(await requestsDuring(mirror, () => another.lookup(RELEASE_PATH))).toContain('/metadata/2.root.json');
  });

  it('a probe time that cannot be kept fails nothing: the next refresh probes again', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror, { clock: new MemoryClock() });
    // A directory where the hint file goes: writing it fails (EISDIR), reading it gives nothing.
    mkdirSync(join(node.cacheDir, '.root-probed-at'), { recursive: true });
    expect((await node.trust.lookup(RELEASE_PATH)).target).not.toBeNull();
    expect(await requestsDuring(mirror, () => node.trust.lookup(RELEASE_PATH))).toContain('/metadata/2.root.json');
  });

  it('a new publication re-signs the timestamp: the root is probed and a rotated one trusted at once', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror, { clock: new MemoryClock() });
    await node.trust.lookup(RELEASE_PATH);
    repo.rotateRoot({ rotateRoles: ['timestamp'] });
    const requests = await requestsDuring(mirror, () => node.trust.lookup(RELEASE_PATH));
    expect(requests).toEqual(expect.arrayContaining(['/metadata/2.root.json', '/metadata/3.root.json']));
    expect((await node.trust.trusted()).find((role) => role.role === 'root')?.version).toBe(2);
  });

  it('a root rotated alone, the timestamp untouched, is found once the probe interval has passed', async () => {
    const { repo, mirror } = await publishedRepository();
    const clock = new MemoryClock();
    const node = trustedNode(repo, mirror, { clock });
    await node.trust.lookup(RELEASE_PATH);
    repo.rotateRoot();
    await node.trust.lookup(RELEASE_PATH);
    expect((await node.trust.trusted()).find((role) => role.role === 'root')?.version).toBe(1);
    clock.advance(ROOT_PROBE_INTERVAL_MS);
    await node.trust.lookup(RELEASE_PATH);
    expect((await node.trust.trusted()).find((role) => role.role === 'root')?.version).toBe(2);
  });
});
