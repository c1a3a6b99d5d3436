import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { codeOf, publishedRepository, RELEASE, trustedNode } from './tuf-release-trust-fixtures.js';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

describe('TufReleaseTrust against a go-tuf repository', () => {
  it('describes a signed target with its length, digest, version and arch, and keeps what it verified', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    const found = await node.trust.lookup('releases/agent-2.0.0.tar.gz');
    expect(found).toEqual({
      target: {
        path: 'releases/agent-2.0.0.tar.gz',
        length: 'release two'.length,
        sha256: sha256('release two'),
        ...RELEASE,
      },
      consistentSnapshot: true,
    });
    // The verified metadata, and when a refresh last looked for a newer root (a hint).
    expect(readdirSync(node.cacheDir).sort()).toEqual([
      '.root-probed-at',
      'root.json',
      'snapshot.json',
      'targets.json',
      'timestamp.json',
    ]);
    const roles = await node.trust.trusted();
    expect(roles.map((role) => [role.role, role.version])).toEqual([
      ['root', 1],
      ['timestamp', 2],
      ['snapshot', 2],
      ['targets', 2],
    ]);
  });

  it('follows a delegation to the role that signs the path', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    const found = await node.trust.lookup('agent/2.1.0/agent.tar.gz');
    expect(found.target).toMatchObject({ version: '2.1.0', sha256: sha256('release 2.1') });
    expect(readdirSync(node.cacheDir)).toContain('agents.json');
  });

  it('answers null for a path no role signs', async () => {
    const { repo, mirror } = await publishedRepository();
    expect((await trustedNode(repo, mirror).trust.lookup('releases/agent-9.9.9.tar.gz')).target).toBeNull();
  });

  it('walks a rotated root chain and trusts the new root from then on', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    await node.trust.lookup('releases/agent-2.0.0.tar.gz');
    repo.rotateRoot({ rotateRoles: ['timestamp'] });
    repo.publish();
    await node.trust.lookup('releases/agent-2.0.0.tar.gz');
    expect((await node.trust.trusted()).find((role) => role.role === 'root')?.version).toBe(2);
  });
});

describe('TufReleaseTrust refusals leave the trusted metadata as it was', () => {
  it.each([
    ['an expired timestamp', 'timestamp'],
    ['an expired snapshot', 'snapshot'],
  ])('%s: E_TRUST_METADATA', async (_name, role) => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    await node.trust.lookup('releases/agent-2.0.0.tar.gz');
    const before = node.snapshot();
    repo.expire(role, new Date(Date.now() - 3_600_000));
    expect(await codeOf(node.trust.lookup('releases/agent-2.0.0.tar.gz'))).toBe('E_TRUST_METADATA');
    expect(node.snapshot()).toEqual(before);
  });

  it('targets signed by fewer keys than the threshold: E_TRUST_METADATA', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    repo.addTarget(
      'releases/agent-3.0.0.tar.gz',
      { content: 'three' },
      { custom: { version: '3.0.0', arch: 'amd64' } },
    );
    repo.publish({ signWith: { targets: 1 } });
    expect(await codeOf(node.trust.lookup('releases/agent-3.0.0.tar.gz'))).toBe('E_TRUST_METADATA');
    expect(node.snapshot()).toEqual({});
  });

  it('an older timestamp than one already trusted (rollback): E_TRUST_METADATA', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    await node.trust.lookup('releases/agent-2.0.0.tar.gz');
    const before = node.snapshot();
    mirror.override('/metadata/timestamp.json', { body: () => readFileSync(repo.metadataPath('timestamp', 1)) });
    expect(await codeOf(node.trust.lookup('releases/agent-2.0.0.tar.gz'))).toBe('E_TRUST_METADATA');
    expect(node.snapshot()).toEqual(before);
  });

  it('a timestamp that never ends (endless data): E_TRUST_METADATA', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    mirror.override('/metadata/timestamp.json', { endless: true });
    expect(await codeOf(node.trust.lookup('releases/agent-2.0.0.tar.gz'))).toBe('E_TRUST_METADATA');
  });

  it('an unreachable repository keeps the transport code, so it is retried like a download', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    mirror.override('/metadata/timestamp.json', { status: 503 });
    expect(await codeOf(node.trust.lookup('releases/agent-2.0.0.tar.gz'))).toBe('E_HTTP_STATUS');
  });

  it('a trusted-metadata directory that cannot be made (a file in its place): E_IO, the file as it was', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    writeFileSync(node.cacheDir, 'not a directory');
    expect(await codeOf(node.trust.lookup('releases/agent-2.0.0.tar.gz'))).toBe('E_IO');
    expect(readFileSync(node.cacheDir, 'utf8')).toBe('not a directory');
  });

  it('an initial root that others could have written: E_TRUST_METADATA', async () => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror, { rootMode: 0o666 });
    const expected = process.getuid?.() === 0 ? 'E_TRUST_METADATA' : 'resolved';
    expect(await codeOf(node.trust.lookup('releases/agent-2.0.0.tar.gz'))).toBe(expected);
  });
});
