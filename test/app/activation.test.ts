import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { makeScratch, makeSymlink, snapshotTree, writeExecutable } from '../support/real-tree.js';
import {
  FLEX_SANDBOX_PATHS as P,
  sandboxUpgrader,
  scriptAgent as agent,
  digestOf,
} from '../support/sandbox-upgrader.js';

describe('direct activation (real files, modelled service)', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let root: string;
  let behaviours: Map<string, AgentBehaviour>;
  let services: MemoryServiceManager;
  let upgrader: Upgrader;
  const at = (path: string): string => join(root, path);

  beforeEach(() => {
    scratch = makeScratch();
    root = scratch.root;
    behaviours = new Map();
    services = new MemoryServiceManager({
      fs: new NodeFileSystem(),
      execStart: at(P.current),
      behaviourOf: (digest) => behaviours.get(digest) ?? 'healthy',
    });
    upgrader = sandboxUpgrader(
      root,
      { agent: { ...FLEX_PROFILE.agent, allowScripts: true } },
      { serviceManager: services },
    );
    writeExecutable(at(P.entry), agent('1.0.0'));
  });
  afterEach(() => scratch.cleanup());

  it('activates a candidate on a legacy host: migrates, installs into green, restarts, records the state', async () => {
    writeExecutable(at('/staging/candidate'), agent('2.0.0'));

    const result = await upgrader.activate({ candidatePath: at('/staging/candidate') });

    expect(result).toMatchObject({
      ok: true,
      value: { outcome: 'activated', from: 'blue', to: 'green', candidateVersion: '2.0.0', restarted: true },
    });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-green');
    expect(readlinkSync(at(P.lastGood))).toBe('aks-flex-node-blue');
    expect(readFileSync(at(P.green), 'utf8')).toBe(agent('2.0.0'));
    expect(services.starts.map((start) => start.digest)).toEqual([digestOf(agent('2.0.0'))]);
    const state = JSON.parse(readFileSync(at('/etc/aks-flex-node/agent-upgrade-state.json'), 'utf8')) as {
      slots: { green: { version: string } };
      highestCommittedVersion: string;
    };
    expect(state.slots.green.version).toBe('2.0.0');
    expect(state.highestCommittedVersion).toBe('2.0.0');
  });

  it('rolls back a candidate that dies after starting (exit 3 data), then refuses it as quarantined unless forced', async () => {
    writeExecutable(at('/staging/candidate'), agent('2.0.0'));
    behaviours.set(digestOf(agent('2.0.0')), 'crash-after-start');

    const first = await upgrader.activate({ candidatePath: at('/staging/candidate') });

    expect(first).toMatchObject({
      ok: false,
      failure: { code: 'E_UNHEALTHY' },
      activation: { outcome: 'rolled-back', from: 'blue', to: 'green', failure: { code: 'E_UNHEALTHY' } },
    });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-blue');
    expect(services.starts.map((start) => start.digest)).toEqual([digestOf(agent('2.0.0')), digestOf(agent('1.0.0'))]);
    expect(await services.mainExecutable()).toBe(at(P.blue));

    const again = await upgrader.activate({ candidatePath: at('/staging/candidate') });
    expect(again).toMatchObject({ ok: false, failure: { code: 'E_QUARANTINED' } });
    const forced = await upgrader.activate({ candidatePath: at('/staging/candidate'), force: true });
    expect(forced).toMatchObject({ ok: false, activation: { outcome: 'rolled-back' } });
  });

  it.each([
    ['older than current', agent('0.9.0'), {}, 'E_DOWNGRADE_REFUSED'],
    ['not the requested version', agent('2.0.0'), { requestedVersion: '2.0.1' }, 'E_VERSION_MISMATCH'],
    ['printing no version', '#!/bin/sh\necho hello\n', {}, 'E_CANDIDATE_VERSION'],
    ['failing its version command', '#!/bin/sh\nexit 7\n', {}, 'E_CANDIDATE_INVALID'],
  ])('refuses a candidate %s and changes nothing', async (_name, content, extra, code) => {
    writeExecutable(at('/staging/candidate'), content);
    // Make 1.0.0 the recorded current version, as a previous activation would have.
    writeExecutable(at('/staging/first'), agent('1.0.0'));
    expect((await upgrader.activate({ candidatePath: at('/staging/first') })).ok).toBe(true);
    const before = snapshotTree(root);

    const result = await upgrader.activate({ candidatePath: at('/staging/candidate'), ...extra });

    expect(result).toMatchObject({ ok: false, failure: { code } });
    expect(snapshotTree(root)).toEqual(before);
  });

  it('refuses a bad candidate on a legacy host before migrating anything', async () => {
    writeExecutable(at('/staging/candidate'), '#!/bin/sh\nexit 1\n');
    const before = snapshotTree(root);
    const result = await upgrader.activate({ candidatePath: at('/staging/candidate') });
    expect(result).toMatchObject({ ok: false, failure: { code: 'E_CANDIDATE_INVALID' } });
    expect(snapshotTree(root)).toEqual(before);
  });

  it('prints the plan with --preflight and changes nothing', async () => {
    writeExecutable(at('/staging/candidate'), agent('2.0.0'));
    const before = snapshotTree(root);

    const plan = await upgrader.preflight({ candidatePath: at('/staging/candidate') });

    expect(plan).toMatchObject({
      ok: true,
      value: { initializeLayout: true, candidateChanged: true, installTarget: at(P.green), activeBinary: at(P.entry) },
    });
    expect(snapshotTree(root)).toEqual(before);
    expect(services.starts).toEqual([]);
  });

  it('treats an identical candidate as unchanged but still restarts the running service', async () => {
    writeExecutable(at('/staging/candidate'), agent('1.0.0'));
    const result = await upgrader.activate({ candidatePath: at('/staging/candidate') });
    expect(result).toMatchObject({ ok: true, value: { outcome: 'unchanged', from: 'blue', to: 'blue' } });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-blue');
  });

  it('leaves an inactive service stopped', async () => {
    services = new MemoryServiceManager({
      fs: new NodeFileSystem(),
      execStart: at(P.current),
      behaviourOf: () => 'healthy',
      initialActivity: 'inactive',
    });
    upgrader = sandboxUpgrader(
      root,
      { agent: { ...FLEX_PROFILE.agent, allowScripts: true } },
      { serviceManager: services },
    );
    writeExecutable(at('/staging/candidate'), agent('2.0.0'));
    const result = await upgrader.activate({ candidatePath: at('/staging/candidate') });
    expect(result).toMatchObject({ ok: true, value: { outcome: 'activated', restarted: false } });
    expect(services.starts).toEqual([]);
  });

  it('rolls back to last-good with a restart, and a second rollback changes nothing', async () => {
    writeExecutable(at('/staging/candidate'), agent('2.0.0'));
    await upgrader.activate({ candidatePath: at('/staging/candidate') });

    const first = await upgrader.rollback();
    const second = await upgrader.rollback();

    expect(first).toMatchObject({ ok: true, value: { changed: true, from: 'green', to: 'blue', restarted: true } });
    expect(second).toMatchObject({ ok: true, value: { changed: false } });
    expect(await services.mainExecutable()).toBe(at(P.blue));
  });
});

/**
 * The layout steps of an activation on real files, with no service manager: what `activate`
 * changes in the layout is exactly the plan's layout steps (these ran through the layout
 * engine's own `switchTo` before the activation's step loop took it over).
 */
describe("the activation's layout steps (real files, no service manager)", () => {
  let scratch: ReturnType<typeof makeScratch>;
  let root: string;
  const at = (path: string): string => join(root, path);
  const scripts = { agent: { ...FLEX_PROFILE.agent, allowScripts: true } };

  beforeEach(() => {
    scratch = makeScratch();
    root = scratch.root;
  });
  afterEach(() => scratch.cleanup());

  it('protects a last-good that points at the inactive slot before overwriting that slot', async () => {
    writeExecutable(at(P.blue), 'v1');
    writeExecutable(at(P.green), 'v0');
    makeSymlink(at(P.current), 'aks-flex-node-blue');
    makeSymlink(at(P.lastGood), 'aks-flex-node-green');
    makeSymlink(at(P.entry), '../lib/aks-flex-node/aks-flex-node-current');
    writeExecutable(at('/staging/candidate'), agent('2.0.0'));

    const result = await sandboxUpgrader(root, scripts).activate({ candidatePath: at('/staging/candidate') });

    expect(result).toMatchObject({ ok: true, value: { outcome: 'activated', from: 'blue', to: 'green' } });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-green');
    expect(readlinkSync(at(P.lastGood))).toBe('aks-flex-node-blue');
    expect(readFileSync(at(P.green), 'utf8')).toBe(agent('2.0.0'));
    expect(readFileSync(at(P.blue), 'utf8')).toBe('v1');
  });

  it('rolls back to last-good after an activation, and a second rollback changes nothing', async () => {
    writeExecutable(at(P.entry), 'v1');
    writeExecutable(at('/staging/candidate'), agent('2.0.0'));
    const activated = await sandboxUpgrader(root, scripts).activate({ candidatePath: at('/staging/candidate') });
    expect(activated).toMatchObject({ ok: true, value: { outcome: 'activated', from: 'blue', to: 'green' } });
    const first = await sandboxUpgrader(root).rollback();
    const afterFirst = snapshotTree(root);
    const second = await sandboxUpgrader(root).rollback();

    expect(first).toMatchObject({ ok: true, value: { changed: true, from: 'green', to: 'blue' } });
    expect(second).toMatchObject({ ok: true, value: { changed: false, from: 'blue', to: 'blue' } });
    expect(snapshotTree(root)).toEqual(afterFirst);
    expect(readFileSync(at(P.entry), 'utf8')).toBe('v1');
  });

  it('treats an identical candidate as no change to the layout, and a second run changes nothing at all', async () => {
    writeExecutable(at(P.entry), agent('1.0.0'));
    writeExecutable(at('/staging/candidate'), agent('1.0.0'));
    const upgrader = sandboxUpgrader(root, scripts);
    expect((await upgrader.migrate()).ok).toBe(true);
    // The state file under /etc is bookkeeping: the activation records the slot's version there.
    const layoutBefore = snapshotTree(root, ['/run', '/etc']);

    const result = await upgrader.activate({ candidatePath: at('/staging/candidate') });
    expect(result).toMatchObject({ ok: true, value: { outcome: 'unchanged', from: 'blue', to: 'blue' } });
    expect(snapshotTree(root, ['/run', '/etc'])).toEqual(layoutBefore);

    const before = snapshotTree(root);
    const again = await upgrader.activate({ candidatePath: at('/staging/candidate') });
    expect(again).toMatchObject({ ok: true, value: { outcome: 'unchanged', from: 'blue', to: 'blue' } });
    expect(snapshotTree(root)).toEqual(before);
  });
});

describe('install from a URL (real files and HTTP, modelled service)', () => {
  it('downloads, verifies, checks and activates the release; a bad digest changes nothing', async () => {
    const { releaseArchive, sha256Hex } = await import('../support/archive/index.js');
    const { serve, startHostileServer } = await import('../support/http/hostile-server.js');
    const scratch = makeScratch();
    const server = await startHostileServer();
    try {
      const at = (path: string): string => join(scratch.root, path);
      writeExecutable(at(P.entry), agent('1.0.0'));
      const archive = releaseArchive(
        process.arch === 'arm64' ? 'aks-flex-node-linux-arm64' : 'aks-flex-node-linux-amd64',
        agent('2.0.0'),
      );
      server.route('/release.tar.gz', serve(archive));
      const services = new MemoryServiceManager({
        fs: new NodeFileSystem(),
        execStart: at(P.current),
        behaviourOf: () => 'healthy',
      });
      const upgrader = sandboxUpgrader(
        scratch.root,
        { agent: { ...FLEX_PROFILE.agent, allowScripts: true } },
        { serviceManager: services },
      );
      const url = `${server.url('/release.tar.gz')}?sig=CANARY-install`;

      const refused = await upgrader.install({ url, sha256: '0'.repeat(64) });
      expect(refused).toMatchObject({ ok: false, failure: { code: 'E_DIGEST_MISMATCH' } });
      // Only the layout was migrated: no slot holds the release and no staging file is left.
      expect(
        Object.keys(snapshotTree(scratch.root)).filter((path) => path.includes('.tmp-') || path.endsWith('-green')),
      ).toEqual([]);

      const installed = await upgrader.install({ url, sha256: sha256Hex(archive), requestedVersion: '2.0.0' });
      expect(installed).toMatchObject({
        ok: true,
        value: { outcome: 'activated', from: 'blue', to: 'green', candidateVersion: '2.0.0' },
      });
      expect(readFileSync(at(P.green), 'utf8')).toBe(agent('2.0.0'));
      expect(JSON.stringify(installed)).not.toContain('CANARY');
    } finally {
      await server.close();
      scratch.cleanup();
    }
  });
});
