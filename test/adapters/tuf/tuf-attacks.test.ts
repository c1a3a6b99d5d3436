// Two attacks of TUF's list against the node's client and a go-tuf repository: fast-forward (a
// compromised timestamp key signs a far higher version, and the node must follow the publisher
// back down once the key is rotated) and extraneous dependencies (a delegated role signing paths
// outside its delegation, or targets nobody asked for, installs nothing).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeOf, publishedRepository, trustedNode } from './tuf-release-trust-fixtures.js';

const RELEASE_PATH = 'releases/agent-2.0.0.tar.gz';
const trustedVersion = (cacheDir: string, role: string): number =>
  (JSON.parse(readFileSync(join(cacheDir, `${role}.json`), 'utf8')) as { signed: { version: number } }).signed.version;

describe('fast-forward: a timestamp signed at a far higher version by a compromised key', () => {
  it('is trusted while the key is, then the publisher rotates the key and goes back to a low version', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    await node.trust.lookup(RELEASE_PATH);
    repo.bump('timestamp', { toVersion: 1_000_000 });
    await node.trust.lookup(RELEASE_PATH);
    expect(trustedVersion(node.cacheDir, 'timestamp')).toBe(1_000_000);
    // Until the key is rotated, a lower version is a rollback and is refused.
    repo.bump('timestamp', { toVersion: 5 });
    expect(await codeOf(node.trust.lookup(RELEASE_PATH))).toBe('E_TRUST_METADATA');
    // The publisher rotates the timestamp key (root 2) and signs a low version with the new key.
    repo.rotateRoot({ rotateRoles: ['timestamp'] });
    repo.bump('timestamp', { toVersion: 6 });
    expect((await node.trust.lookup(RELEASE_PATH)).target).not.toBeNull();
    expect(trustedVersion(node.cacheDir, 'root')).toBe(2);
    // The new low version is the baseline now: an older one of the new key is a rollback again.
    expect(trustedVersion(node.cacheDir, 'timestamp')).toBe(6);
    repo.bump('timestamp', { toVersion: 4 });
    expect(await codeOf(node.trust.lookup(RELEASE_PATH))).toBe('E_TRUST_METADATA');
  });
});

describe('extraneous dependencies: targets nobody asked for, or signed by a role not trusted for them', () => {
  it('a delegated role that signs a path outside its delegation signs nothing there', async () => {
    const { repo, mirror } = await publishedRepository();
    // The `agents` role is trusted for agent/*/* only; it also "signs" a release path.
    repo.addTarget(
      'releases/agent-6.6.6.tar.gz',
      { content: 'extraneous' },
      { custom: { version: '6.6.6', arch: 'amd64' }, role: 'agents', outsideDelegation: true },
    );
    repo.publish();
    const node = trustedNode(repo, mirror);
    expect((await node.trust.lookup('releases/agent-6.6.6.tar.gz')).target).toBeNull();
    // The path its delegation covers still resolves.
    expect((await node.trust.lookup('agent/2.1.0/agent.tar.gz')).target).not.toBeNull();
  });

  it('a lookup fetches metadata and nothing of the other targets the repository signs', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    await node.trust.lookup(RELEASE_PATH);
    expect(mirror.requests.filter((path) => path.startsWith('/targets/'))).toEqual([]);
  });
});
