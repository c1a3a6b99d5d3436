import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { serveTufRepo, type TufMirror } from '../../support/tuf/serve-tuf-repo.js';
import { type TufKey, validSignatures } from '../../support/tuf/tuf-json.js';
import { type TufInitOptions, type TufMetadata, TufTestRepo } from '../../support/tuf/tuf-repo-tool.js';

// Each test makes its own repository in its own temp dir; these remove them (and stop mirrors).
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});
function repository(options: TufInitOptions = {}): TufTestRepo {
  const repo = TufTestRepo.inTempDir(options);
  cleanups.push(() => repo.remove());
  return repo;
}
async function mirror(repo: TufTestRepo): Promise<TufMirror> {
  const m = await serveTufRepo(repo.dir);
  cleanups.push(() => m.close());
  return m;
}

const AGENTS = { name: 'agents', paths: ['agent/*/*'] };
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
const keysOf = (root: TufMetadata): Record<string, TufKey> => root.signed['keys'] as Record<string, TufKey>;
const rolesOf = (root: TufMetadata): Record<string, { keyids: string[]; threshold: number }> =>
  root.signed['roles'] as Record<string, { keyids: string[]; threshold: number }>;
const metaOf = (
  m: TufMetadata,
): Record<string, { version: number; length?: number; hashes?: Record<string, string> }> =>
  m.signed['meta'] as Record<string, { version: number; length?: number; hashes?: Record<string, string> }>;
const targetsOf = (
  m: TufMetadata,
): Record<string, { length: number; hashes: Record<string, string>; custom?: unknown }> =>
  m.signed['targets'] as Record<string, { length: number; hashes: Record<string, string>; custom?: unknown }>;
const delegationsOf = (m: TufMetadata): { keys: Record<string, TufKey>; roles: Record<string, unknown>[] } =>
  m.signed['delegations'] as { keys: Record<string, TufKey>; roles: Record<string, unknown>[] };

describe('tuf-repo (go-tuf v2) repositories on disk', () => {
  it('init publishes version 1 of every role under consistent-snapshot names, each validly signed', () => {
    const repo = repository({ targetsKeys: 3, targetsThreshold: 2, delegate: AGENTS });
    expect(readdirSync(repo.metadataDir).sort()).toEqual(
      [
        '1.agents.json',
        '1.root.json',
        '1.snapshot.json',
        '1.targets.json',
        '1.timestamp.json',
        'timestamp.json',
      ].sort(),
    );
    const root = repo.metadata('root', 1);
    expect(root.signed['consistent_snapshot']).toBe(true);
    expect(validSignatures(root, keysOf(root))).toEqual(rolesOf(root)['root']?.keyids);
    // targets: 2 of 3, and all three signed.
    expect(rolesOf(root)['targets']).toMatchObject({ threshold: 2 });
    expect(rolesOf(root)['targets']?.keyids).toHaveLength(3);
    const targets = repo.metadata('targets', 1);
    expect(validSignatures(targets, keysOf(root)).sort()).toEqual([...(rolesOf(root)['targets']?.keyids ?? [])].sort());
    // The delegation, and the delegated role signed by the key it names.
    const delegation = delegationsOf(targets);
    expect(delegation.roles).toEqual([
      expect.objectContaining({ name: 'agents', paths: ['agent/*/*'], threshold: 1, terminating: true }),
    ]);
    expect(validSignatures(repo.metadata('agents', 1), delegation.keys)).toEqual(delegation.roles[0]?.['keyids']);
    // snapshot lists every targets role; timestamp pins the snapshot file by length and sha256.
    const snapshot = repo.metadata('snapshot', 1);
    expect(metaOf(snapshot)).toEqual({ 'targets.json': { version: 1 }, 'agents.json': { version: 1 } });
    expect(validSignatures(snapshot, keysOf(root))).toEqual(rolesOf(root)['snapshot']?.keyids);
    const timestamp = repo.metadata('timestamp');
    const snapshotFile = readFileSync(repo.metadataPath('snapshot', 1));
    expect(metaOf(timestamp)['snapshot.json']).toEqual({
      version: 1,
      length: snapshotFile.length,
      hashes: { sha256: sha256(snapshotFile) },
    });
    expect(validSignatures(timestamp, keysOf(root))).toEqual(rolesOf(root)['timestamp']?.keyids);
  });

  it('add-target stores the file by sha256 and lists it with custom metadata, in the delegated role too', () => {
    const repo = repository({ delegate: AGENTS });
    const custom = { version: '1.2.3', platform: { os: 'linux', arch: 'amd64' }, size: 11 };
    repo.addTarget('agent/1.2.3/agent.tar.gz', { content: 'agent 1.2.3' }, { role: 'agents', custom });
    repo.addTarget('notes/readme.txt', { content: 'read me' });
    // Staged only: nothing a client fetches changed yet.
    expect(existsSync(repo.metadataPath('agents', 2))).toBe(false);
    expect(repo.info().roles['agents']).toMatchObject({ version: 2, published: false });
    repo.publish();
    const agents = repo.metadata('agents', 2);
    const entry = targetsOf(agents)['agent/1.2.3/agent.tar.gz'];
    expect(entry).toEqual({ length: 11, hashes: { sha256: sha256('agent 1.2.3') }, custom });
    const stored = join(repo.targetsDir, 'agent', '1.2.3', `${sha256('agent 1.2.3')}.agent.tar.gz`);
    expect(readFileSync(stored, 'utf8')).toBe('agent 1.2.3');
    expect(readFileSync(join(repo.targetsDir, 'notes', `${sha256('read me')}.readme.txt`), 'utf8')).toBe('read me');
    const delegation = delegationsOf(repo.metadata('targets', 2));
    expect(validSignatures(agents, delegation.keys)).toHaveLength(1);
    expect(metaOf(repo.metadata('snapshot', 2))).toEqual({
      'targets.json': { version: 2 },
      'agents.json': { version: 2 },
    });
    expect(repo.info().targets).toEqual([
      expect.objectContaining({ path: 'notes/readme.txt', role: 'targets', custom: null }),
      expect.objectContaining({ path: 'agent/1.2.3/agent.tar.gz', role: 'agents', custom, length: 11 }),
    ]);
    // A path outside the delegation, or custom metadata canonical JSON cannot hold, is refused
    // with the tool's one-line reason.
    expect(() => repo.addTarget('other/x.txt', { content: 'x' }, { role: 'agents' })).toThrow(
      /^tuf-repo add-target: --path "other\/x.txt" is outside agents's paths \[agent\/\*\/\*\]$/,
    );
    expect(() => repo.addTarget('x.txt', { content: 'x' }, { custom: { ratio: 1.5 } })).toThrow(/no floats/);
  });

  it('remove-target drops the target from the new targets version only', () => {
    const repo = repository();
    repo.addTarget('a.txt', { content: 'a' });
    repo.addTarget('b.txt', { content: 'b' });
    repo.publish();
    repo.removeTarget('a.txt');
    repo.publish();
    expect(Object.keys(targetsOf(repo.metadata('targets', 2))).sort()).toEqual(['a.txt', 'b.txt']);
    expect(Object.keys(targetsOf(repo.metadata('targets', 3)))).toEqual(['b.txt']);
    expect(metaOf(repo.metadata('snapshot', 3))['targets.json']).toEqual({ version: 3 });
    // The old version still lists it, so its file stays for a rollback test to serve.
    expect(existsSync(join(repo.targetsDir, `${sha256('a')}.a.txt`))).toBe(true);
    expect(() => repo.removeTarget('a.txt')).toThrow(/no role lists "a.txt"/);
  });

  it('rotate-root writes root v2 with new keys, signed by the old and the new root keys', () => {
    const repo = repository({ rootKeys: 2, rootThreshold: 2 });
    repo.rotateRoot({ newKeys: 3, threshold: 2 });
    const [v1, v2] = [repo.metadata('root', 1), repo.metadata('root', 2)];
    const [oldIds, newIds] = [rolesOf(v1)['root']?.keyids ?? [], rolesOf(v2)['root']?.keyids ?? []];
    expect(v2.signed.version).toBe(2);
    expect(oldIds).toHaveLength(2);
    expect(newIds).toHaveLength(3);
    expect(newIds.filter((id) => oldIds.includes(id))).toEqual([]);
    expect(rolesOf(v2)['root']?.threshold).toBe(2);
    expect(v2.signatures.map((s) => s.keyid).sort()).toEqual([...oldIds, ...newIds].sort());
    expect(validSignatures(v2, keysOf(v1)).sort()).toEqual([...oldIds].sort());
    expect(validSignatures(v2, keysOf(v2)).sort()).toEqual([...newIds].sort());
    // Other roles keep their keys, so nothing else was re-signed.
    expect(rolesOf(v2)['timestamp']).toEqual(rolesOf(v1)['timestamp']);
    expect(repo.metadata('timestamp').signed.version).toBe(1);
    // --sign-old 1: one old signature, below the old threshold of 2, for a rejected-rotation test.
    repo.rotateRoot({ signOld: 1 });
    const v3 = repo.metadata('root', 3);
    expect(validSignatures(v3, keysOf(v2))).toEqual([newIds[0]]);
    expect(validSignatures(v3, keysOf(v3))).toHaveLength(3);
  });

  it('rotate-root --rotate-role timestamp re-signs the timestamp with the key the new root names', () => {
    const repo = repository();
    repo.rotateRoot({ rotateRoles: ['timestamp'] });
    const [v1, v2] = [repo.metadata('root', 1), repo.metadata('root', 2)];
    expect(rolesOf(v2)['timestamp']?.keyids).not.toEqual(rolesOf(v1)['timestamp']?.keyids);
    const timestamp = repo.metadata('timestamp');
    expect(timestamp.signed.version).toBe(2);
    expect(validSignatures(timestamp, keysOf(v2))).toEqual(rolesOf(v2)['timestamp']?.keyids);
    expect(validSignatures(timestamp, keysOf(v1))).toEqual([]);
  });

  it('publish --sign-with targets=1 makes a targets version below its 2-of-3 threshold', () => {
    const repo = repository({ targetsKeys: 3, targetsThreshold: 2 });
    repo.publish({ signWith: { targets: 1 } });
    const root = repo.metadata('root', 1);
    const targets = repo.metadata('targets', 2);
    expect(targets.signatures).toHaveLength(1);
    expect(validSignatures(targets, keysOf(root))).toEqual([rolesOf(root)['targets']?.keyids[0]]);
    expect(metaOf(repo.metadata('snapshot', 2))['targets.json']).toEqual({ version: 2 });
    // A plain publish repairs it: a new version signed by all three.
    repo.publish();
    expect(validSignatures(repo.metadata('targets', 3), keysOf(root))).toHaveLength(3);
    expect(metaOf(repo.metadata('snapshot', 3))['targets.json']).toEqual({ version: 3 });
  });

  it('sets expiry: --expires-days for every role, expire for one, keeping the old versions', () => {
    const repo = repository({ expiresDays: 7 });
    const inAWeek = Date.now() + 7 * 86_400_000;
    for (const role of ['root', 'targets', 'snapshot', 'timestamp']) {
      const expires = repo.info().roles[role]?.expires ?? '';
      expect(expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(Math.abs(Date.parse(expires) - inAWeek)).toBeLessThan(5 * 60_000);
    }
    repo.expire('timestamp', '2020-01-02T03:04:05Z');
    expect(repo.metadata('timestamp').signed).toMatchObject({ version: 2, expires: '2020-01-02T03:04:05Z' });
    expect(repo.metadata('timestamp', 1).signed.version).toBe(1);
    repo.expire('targets', new Date('2031-05-06T07:08:09.500Z'));
    expect(repo.metadata('targets', 2).signed.expires).toBe('2031-05-06T07:08:09Z');
    expect(metaOf(repo.metadata('snapshot', 2))['targets.json']).toEqual({ version: 2 });
    expect(repo.metadata('timestamp').signed.version).toBe(3);
  });

  it('bump makes a new snapshot and timestamp without other changes, leaving staged ones staged', () => {
    const repo = repository();
    repo.addTarget('staged.txt', { content: 'not yet' });
    repo.bump('snapshot');
    expect(metaOf(repo.metadata('snapshot', 2))).toEqual(metaOf(repo.metadata('snapshot', 1)));
    expect(metaOf(repo.metadata('timestamp'))['snapshot.json']?.version).toBe(2);
    repo.bump('timestamp');
    expect(repo.metadata('timestamp').signed.version).toBe(3);
    expect(existsSync(repo.metadataPath('snapshot', 3))).toBe(false);
    expect(repo.info().roles['targets']).toMatchObject({ version: 2, published: false });
  });

  it('build script --check prints where the tool would be and exits 1 when the cache lacks it', () => {
    const empty = mkdtempSync(join(tmpdir(), 'tuf-cache-'));
    cleanups.push(() => rmSync(empty, { recursive: true, force: true }));
    const script = resolve(import.meta.dirname, '../../../scripts/build-tuf-repo-tool.sh');
    const check = spawnSync('bash', [script, '--check'], {
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, AGENT_UPGRADE_TUF_CACHE: empty },
    });
    expect(check.status).toBe(1);
    expect(check.stdout.trim()).toMatch(new RegExp(`^${empty}/[0-9a-f]{16}/tuf-repo$`));
  });
});

describe('serveTufRepo, an honest mirror or a hostile one', () => {
  const get = (url: string): Promise<Response> => fetch(url, { signal: AbortSignal.timeout(5000) });

  it('serves metadata and targets as they are on disk now, and nothing outside them', async () => {
    const repo = repository();
    repo.addTarget('dir/a.txt', { content: 'a' });
    repo.publish();
    const m = await mirror(repo);
    const timestamp = await get(`${m.metadataUrl}/timestamp.json`);
    expect(timestamp.status).toBe(200);
    expect(timestamp.headers.get('content-type')).toBe('application/json');
    expect(Buffer.from(await timestamp.arrayBuffer())).toEqual(readFileSync(repo.metadataPath('timestamp')));
    expect(await (await get(`${m.targetsUrl}/dir/${sha256('a')}.a.txt`)).text()).toBe('a');
    expect((await get(`${m.metadataUrl}/2.root.json`)).status).toBe(404);
    expect((await get(`${m.metadataUrl}/..%2F..%2Fkeys%2Froot-1.json`)).status).toBe(404);
    expect((await get(`${m.metadataUrl}/../staged/root.json`)).status).toBe(404);
    repo.bump('timestamp');
    const next = (await (await get(`${m.metadataUrl}/timestamp.json`)).json()) as TufMetadata;
    expect(next.signed.version).toBe(3);
    expect(m.requests.filter((path) => path === '/metadata/timestamp.json')).toHaveLength(2);
  });

  it('overrides a path with a status, a body, a delay or an endless body, and restores it', async () => {
    const repo = repository();
    const m = await mirror(repo);
    const path = '/metadata/timestamp.json';
    const url = `${m.metadataUrl}/timestamp.json`;
    const honest = readFileSync(repo.metadataPath('timestamp'));
    m.override(path, { status: 503 });
    expect((await get(url)).status).toBe(503);
    m.override(path, { body: (original) => (original ?? Buffer.alloc(0)).subarray(0, 10) });
    expect(Buffer.from(await (await get(url)).arrayBuffer())).toEqual(honest.subarray(0, 10));
    m.override(path, { delayMs: 300 });
    const started = Date.now();
    expect((await get(url)).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    m.override(path, { endless: true });
    const reader = (await get(url)).body?.getReader();
    let received = 0;
    while (reader && received < 1 << 20) received += (await reader.read()).value?.length ?? Infinity;
    await reader?.cancel();
    expect(received).toBeGreaterThanOrEqual(1 << 20);
    expect(received).not.toBe(Infinity);
    m.override(path, undefined);
    expect(Buffer.from(await (await get(url)).arrayBuffer())).toEqual(honest);
  });

  it('close() ends stalled and endless responses at once', async () => {
    const repo = repository();
    const m = await serveTufRepo(repo.dir, {
      hook: (path) => (path.endsWith('timestamp.json') ? { endless: true } : { delayMs: 60_000 }),
    });
    cleanups.push(() => m.close());
    const started = Date.now();
    const stalled = get(`${m.metadataUrl}/1.root.json`);
    const endless = (await get(`${m.metadataUrl}/timestamp.json`)).body?.getReader();
    await endless?.read();
    await m.close();
    await expect(stalled).rejects.toThrow();
    await expect(drain(endless)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(4000);
  });
});

/** Reads to the end; rejects when the connection breaks first. */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array> | undefined): Promise<void> {
  while (reader && !(await reader.read()).done);
}
