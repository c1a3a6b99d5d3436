import { describe, expect, it } from 'vitest';
import type { Sha256 } from '../../src/domain/common/digest.js';
import type { SignedTarget } from '../../src/domain/common/trust/signed-target.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import type { ReleaseTrust, TargetLookup, TrustedRole } from '../../src/ports/common/release-trust.js';
import { resolveInSnapshot } from './host-invariants.js';
import { CONFIG, LAYOUT, ManagedWorld } from './managed-world.js';

/** Releases under https://releases.example/ are signed by a repository the test describes. */
const SIGNED_CONFIG: UpgraderConfig = {
  ...CONFIG,
  trust: {
    mode: 'tuf',
    rootFile: '/etc/aks-flex-node/trust/root.json',
    metadataUrl: 'https://releases.example/metadata/',
    targetsUrl: 'https://releases.example/',
    mirrors: [],
    cacheDir: '/etc/aks-flex-node/agent-upgrade-trust',
  },
};

/** The signed targets by path, as verified metadata would describe them (no consistent snapshots). */
class SignedTargets implements ReleaseTrust {
  readonly targets = new Map<string, SignedTarget>();
  roles: readonly TrustedRole[] = [];

  lookup(targetPath: string): Promise<TargetLookup> {
    return Promise.resolve({ target: this.targets.get(targetPath) ?? null, consistentSnapshot: false });
  }

  trusted() {
    return Promise.resolve(this.roles);
  }
}

function signedWorld(
  sign: (release: { sha256: string; bytes: number }) => SignedTarget | null,
  extra: Readonly<Record<string, string>> = {},
) {
  const world = new ManagedWorld();
  const trust = new SignedTargets();
  world.releaseTrust = trust;
  const release = world.publishRelease('2.0.0');
  const bytes = world.source.archives.get(release.url)?.byteLength ?? 0;
  const signed = sign({ sha256: release.sha256, bytes });
  if (signed !== null) trust.targets.set('agent-2.0.0.tar.gz', signed);
  const parameters = { downloadURL: release.url, ...extra };
  const operation = world.store.create({ name: 'signed', parameters });
  const handle = () => world.daemon(null, SIGNED_CONFIG).handler.handle({ operation, phase: null, parameters });
  return { world, handle, trust };
}

const target = (sha256: string, bytes: number, version = '2.0.0'): SignedTarget => ({
  path: 'agent-2.0.0.tar.gz',
  length: bytes,
  sha256: sha256 as Sha256,
  version,
  arch: 'amd64',
});

describe('the managed path with signed releases', () => {
  it('installs a signed release without a digest in the operation', async () => {
    const { world, handle } = signedWorld(({ sha256, bytes }) => target(sha256, bytes));
    expect(await handle()).toEqual({ kind: 'handed-over' });
    expect(world.store.get('signed')?.phase).toBe('InProgress');
  });

  it('a rollback operation to a release the publisher no longer signs: Failed/Untrusted', async () => {
    const { world, handle } = signedWorld(() => null, { allowDowngrade: 'true' });
    expect(await handle()).toEqual({ kind: 'finished' });
    expect(world.store.get('signed')).toMatchObject({ phase: 'Failed', reason: 'Untrusted' });
  });

  it.each([
    ['a release no role signs', () => null],
    ['a release signed with another digest', ({ bytes }: { bytes: number }) => target('e'.repeat(64), bytes)],
    [
      'a binary that prints another version than signed',
      ({ sha256, bytes }: { sha256: string; bytes: number }) => target(sha256, bytes, '2.0.1'),
    ],
  ])('%s: Failed/Untrusted, binaries untouched, record gone', async (_name, sign) => {
    const { world, handle } = signedWorld(sign);
    expect(await handle()).toEqual({ kind: 'finished' });
    expect(world.store.get('signed')).toMatchObject({ phase: 'Failed', reason: 'Untrusted' });
    expect(resolveInSnapshot(world.fs.snapshot(), LAYOUT.current)).toBe(LAYOUT.blue);
    expect(await world.fs.lstat(LAYOUT.record)).toBeNull();
    expect(await world.fs.lstat(LAYOUT.green)).toBeNull();
  });
});

describe("the daemon's Node report with signed releases", () => {
  const DAY_MS = 86_400_000;
  const expiresIn = (world: ManagedWorld, days: number): string =>
    `${new Date(world.clock.nowMs() + days * DAY_MS).toISOString().slice(0, 19)}Z`;

  it("carries each trusted role's version and expiry beside the agent version, and warns of one about to expire", async () => {
    const { world, trust } = signedWorld(() => null);
    trust.roles = [
      { role: 'root', version: 2, expires: expiresIn(world, 300) },
      { role: 'timestamp', version: 41, expires: expiresIn(world, 3) },
    ];
    expect(await world.daemon(null, SIGNED_CONFIG).start()).toEqual({ kind: 'open' });
    expect(world.store.versionReports).toEqual(['1.0.0']);
    const [written] = world.store.trustedMetadataReports;
    expect(JSON.parse(written ?? 'null')).toEqual(trust.roles);
    const warned = world.logger.lines.filter((line) => line.level === 'warn' && 'expires' in line.fields);
    expect(warned.map((line) => line.fields)).toEqual([expect.objectContaining({ role: 'timestamp' })]);
  });

  it('writes again when only the trusted metadata changed, and reports none before any was verified', async () => {
    const { world, trust } = signedWorld(() => null);
    const daemon = world.daemon(null, SIGNED_CONFIG);
    expect(await daemon.start()).toEqual({ kind: 'open' });
    trust.roles = [{ role: 'timestamp', version: 42, expires: expiresIn(world, 30) }];
    expect(await daemon.start()).toEqual({ kind: 'open' });
    expect(await daemon.start()).toEqual({ kind: 'open' });
    expect(world.store.trustedMetadataReports.map((text) => (text === null ? null : JSON.parse(text)))).toEqual([
      null,
      trust.roles,
    ]);
  });
});
