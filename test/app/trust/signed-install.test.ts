import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FLEX_SANDBOX_PATHS as P } from '../../support/sandbox-upgrader.js';
import { serveTufRepo } from '../../support/tuf/serve-tuf-repo.js';
import {
  agentScript,
  ARCH,
  archiveOf,
  signedNode,
  signedRepository,
  TRUST_CACHE_DIR,
} from './signed-install-fixtures.js';

const RELEASE = 'releases/agent-2.0.0.tar.gz';
const sha256 = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const flippedLastByte = (bytes: Uint8Array): Buffer => {
  const copy = Buffer.from(bytes);
  copy[copy.length - 1] = (copy[copy.length - 1] ?? 0) ^ 0xff;
  return copy;
};
const codeOf = (result: { ok: boolean; failure?: { code: string } }): string =>
  result.ok ? 'ok' : (result.failure?.code ?? '?');

describe('install of a signed release (trust mode tuf, go-tuf repository)', () => {
  it('installs the signed target and checks the version the publisher signed', async () => {
    const { repo, mirror } = await signedRepository();
    const node = await signedNode(repo, mirror);
    const installed = await node.upgrader.install({ url: `${mirror.targetsUrl}/${RELEASE}?sig=CANARY` });
    expect(installed).toMatchObject({ ok: true, value: { outcome: 'activated', candidateVersion: '2.0.0' } });
    expect(readFileSync(node.at(P.green), 'utf8')).toBe(agentScript('2.0.0'));
    expect(readdirSync(node.at(TRUST_CACHE_DIR)).sort()).toEqual([
      '.root-probed-at',
      'root.json',
      'snapshot.json',
      'targets.json',
      'timestamp.json',
    ]);
    const status = await node.upgrader.status();
    expect(status.ok && status.value.trust).toMatchObject({
      mode: 'tuf',
      targetsUrl: `${mirror.targetsUrl}/`,
      roles: [
        { role: 'root', version: 1 },
        { role: 'timestamp', version: 2 },
        { role: 'snapshot', version: 2 },
        { role: 'targets', version: 2 },
      ],
    });
  });

  it('takes the release from a mirror the configuration names', async () => {
    const { repo, mirror } = await signedRepository();
    const second = await serveTufRepo(repo.dir);
    try {
      const node = await signedNode(repo, mirror, [`${second.targetsUrl}/`]);
      expect(codeOf(await node.upgrader.install({ url: `${second.targetsUrl}/${RELEASE}` }))).toBe('ok');
      expect(second.requests.some((path) => path.startsWith('/targets/releases/'))).toBe(true);
    } finally {
      await second.close();
    }
  });

  it('warns of metadata that expires within a week, and not of metadata that does not', async () => {
    const expiryWarnings = (node: { logger: { lines: readonly { fields: object }[] } }) =>
      node.logger.lines
        .filter((line) => 'expires' in line.fields)
        .map((line) => (line.fields as { role: string }).role);
    const soon = await signedRepository(3);
    const warned = await signedNode(soon.repo, soon.mirror);
    expect(codeOf(await warned.upgrader.install({ url: `${soon.mirror.targetsUrl}/${RELEASE}` }))).toBe('ok');
    expect(expiryWarnings(warned).sort()).toEqual(['root', 'snapshot', 'targets', 'timestamp']);
    const later = await signedRepository(30);
    const quiet = await signedNode(later.repo, later.mirror);
    expect(codeOf(await quiet.upgrader.install({ url: `${later.mirror.targetsUrl}/${RELEASE}` }))).toBe('ok');
    expect(expiryWarnings(quiet)).toEqual([]);
  });

  it('accepts a requested digest equal to the signed one', async () => {
    const { repo, mirror } = await signedRepository();
    const node = await signedNode(repo, mirror);
    const url = `${mirror.targetsUrl}/${RELEASE}`;
    expect(codeOf(await node.upgrader.install({ url, sha256: sha256(archiveOf('2.0.0')) }))).toBe('ok');
  });
});

describe('a release the publisher did not sign changes nothing on the host', () => {
  it.each([
    ['a URL outside the targets URL and its mirrors', 'elsewhere', {}],
    ['a target the metadata does not list', 'unsigned', {}],
    ['a requested digest other than the signed one', 'signed', { sha256: 'f'.repeat(64) }],
  ])('%s: E_UNTRUSTED', async (_name, which, extra) => {
    const { repo, mirror } = await signedRepository();
    const node = await signedNode(repo, mirror);
    const before = node.tree();
    const url = {
      elsewhere: `${mirror.metadataUrl}/../elsewhere/${RELEASE}`,
      unsigned: `${mirror.targetsUrl}/releases/agent-6.6.6.tar.gz`,
      signed: `${mirror.targetsUrl}/${RELEASE}`,
    }[which];
    expect(codeOf(await node.upgrader.install({ url: url ?? '', ...extra }))).toBe('E_UNTRUSTED');
    expect(node.tree()).toEqual(before);
  });

  it('an archive swapped on the release host: E_UNTRUSTED', async () => {
    const { repo, mirror } = await signedRepository();
    const node = await signedNode(repo, mirror);
    const before = node.tree();
    const stored = `/targets/releases/${sha256(archiveOf('2.0.0'))}.agent-2.0.0.tar.gz`;
    mirror.override(stored, { body: archiveOf('6.6.6') });
    expect(codeOf(await node.upgrader.install({ url: `${mirror.targetsUrl}/${RELEASE}` }))).toBe('E_UNTRUSTED');
    expect(node.tree()).toEqual(before);
  });

  it.each([
    ['other bytes', { body: archiveOf('6.6.6') }],
    // Same length, broken gzip trailer: the gzip layer fails before the digest is known.
    ['the signed length of other bytes', { body: flippedLastByte(archiveOf('2.0.0')) }],
    ['endless bytes', { endless: true }],
  ])('a malicious mirror serving %s for the signed archive: E_UNTRUSTED', async (_name, answer) => {
    const { repo, mirror } = await signedRepository();
    const malicious = await serveTufRepo(repo.dir);
    try {
      const node = await signedNode(repo, mirror, [`${malicious.targetsUrl}/`]);
      const before = node.tree();
      malicious.override(`/targets/releases/${sha256(archiveOf('2.0.0'))}.agent-2.0.0.tar.gz`, answer);
      const installed = await node.upgrader.install({ url: `${malicious.targetsUrl}/${RELEASE}` });
      expect(codeOf(installed)).toBe('E_UNTRUSTED');
      expect(node.tree()).toEqual(before);
    } finally {
      await malicious.close();
    }
  });

  it('a signed archive whose binary prints another version (mix-and-match): E_UNTRUSTED', async () => {
    const { repo, mirror } = await signedRepository();
    repo.addTarget(
      'releases/agent-2.1.0.tar.gz',
      { content: archiveOf('2.0.9') },
      { custom: { version: '2.1.0', arch: ARCH } },
    );
    repo.publish();
    const node = await signedNode(repo, mirror);
    const before = node.tree();
    const installed = await node.upgrader.install({ url: `${mirror.targetsUrl}/releases/agent-2.1.0.tar.gz` });
    expect(codeOf(installed)).toBe('E_UNTRUSTED');
    expect(node.tree()).toEqual(before);
  });

  it('a release the publisher removed from its targets, even as a downgrade: E_UNTRUSTED', async () => {
    const { repo, mirror } = await signedRepository();
    repo.addTarget(
      'releases/agent-0.9.0.tar.gz',
      { content: archiveOf('0.9.0') },
      { custom: { version: '0.9.0', arch: ARCH } },
    );
    repo.publish();
    const node = await signedNode(repo, mirror);
    repo.removeTarget('releases/agent-0.9.0.tar.gz');
    repo.publish();
    const before = node.tree();
    const url = `${mirror.targetsUrl}/releases/agent-0.9.0.tar.gz`;
    expect(codeOf(await node.upgrader.install({ url, allowDowngrade: true }))).toBe('E_UNTRUSTED');
    expect(node.tree()).toEqual(before);
  });

  it('expired metadata: E_TRUST_METADATA', async () => {
    const { repo, mirror } = await signedRepository();
    const node = await signedNode(repo, mirror);
    const before = node.tree();
    repo.expire('timestamp', new Date(Date.now() - 60_000));
    expect(codeOf(await node.upgrader.install({ url: `${mirror.targetsUrl}/${RELEASE}` }))).toBe('E_TRUST_METADATA');
    expect(node.tree()).toEqual(before);
  });
});
