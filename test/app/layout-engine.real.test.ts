import { mkdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { FLEX_SANDBOX_PATHS as P, sandboxUpgrader } from '../support/sandbox-upgrader.js';
import { makeScratch, makeSymlink, snapshotTree, writeExecutable } from '../support/real-tree.js';

describe('layout engine on a real filesystem', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let root: string;
  const at = (path: string): string => join(root, path);

  beforeEach(() => {
    scratch = makeScratch();
    root = scratch.root;
  });
  afterEach(() => scratch.cleanup());

  it('migrates a legacy layout, and a second migration changes nothing', async () => {
    writeExecutable(at(P.entry), '#!/bin/sh\necho legacy v1\n');
    const upgrader = sandboxUpgrader(root);

    const first = await upgrader.migrate();
    expect(first.ok && first.value.changed).toBe(true);
    expect(realpathSync(at(P.current))).toBe(realpathSync(at(P.blue)));
    expect(realpathSync(at(P.lastGood))).toBe(realpathSync(at(P.blue)));
    expect(realpathSync(at(P.entry))).toBe(realpathSync(at(P.blue)));
    expect(readlinkSync(at(P.entry))).toBe('../lib/aks-flex-node/aks-flex-node-current');
    expect(readFileSync(at(P.blue), 'utf8')).toBe('#!/bin/sh\necho legacy v1\n');

    const before = snapshotTree(root);
    const second = await upgrader.migrate();
    expect(second).toMatchObject({ ok: true, value: { changed: false, currentSlot: 'blue', lastGoodSlot: 'blue' } });
    expect(snapshotTree(root)).toEqual(before);
  });

  it('repairs a dangling current link from the slot that exists', async () => {
    writeExecutable(at(P.blue), 'blue');
    makeSymlink(at(P.current), 'aks-flex-node-green');
    makeSymlink(at(P.entry), '../lib/aks-flex-node/aks-flex-node-current');

    const result = await sandboxUpgrader(root).migrate();

    expect(result).toMatchObject({ ok: true, value: { currentSlot: 'blue', lastGoodSlot: 'blue' } });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-blue');
    expect(realpathSync(at(P.entry))).toBe(realpathSync(at(P.blue)));
  });

  // Switching to a candidate is the activation's (its step loop runs the layout steps): those
  // tests live in test/app/activation.test.ts.

  it('refuses roles that alias through a symlinked directory, changing nothing', async () => {
    writeExecutable(at(P.entry), 'v1');
    mkdirSync(at(P.slotDir), { recursive: true });
    makeSymlink(at('/etc/alias'), '../usr/local/lib/aks-flex-node');
    const before = snapshotTree(root);
    const upgrader = sandboxUpgrader(root, {
      paths: { ...FLEX_PROFILE.paths, state: '/etc/alias/aks-flex-node-blue' },
    });

    const result = await upgrader.migrate();

    expect(result).toMatchObject({ ok: false, failure: { code: 'E_LAYOUT' } });
    expect(snapshotTree(root)).toEqual(before);
  });

  it('refuses a symlinked directory that leads out of the sandbox root, changing nothing', async () => {
    const outside = makeScratch('agent-upgrade-outside-');
    try {
      writeExecutable(at(P.entry), 'v1');
      mkdirSync(at('/usr/local/lib'), { recursive: true });
      makeSymlink(at(P.slotDir), outside.root);
      const before = snapshotTree(root);

      const result = await sandboxUpgrader(root).migrate();

      expect(result).toMatchObject({ ok: false, failure: { code: 'E_LAYOUT' } });
      expect(snapshotTree(root)).toEqual(before);
      expect(snapshotTree(outside.root)).toEqual({});
    } finally {
      outside.cleanup();
    }
  });

  it.each([
    [
      'a directory where the blue slot must be',
      (at: (p: string) => string) => mkdirSync(at(P.blue), { recursive: true }),
    ],
    [
      'a regular file where the current link must be',
      (at: (p: string) => string) => writeExecutable(at(P.current), 'x'),
    ],
    [
      'a directory as the compatibility entry',
      (at: (p: string) => string) => mkdirSync(at(P.entry), { recursive: true }),
    ],
    [
      'a directory where the record must be',
      (at: (p: string) => string) => mkdirSync(at(P.record), { recursive: true }),
    ],
    ['a non-executable legacy binary', (at: (p: string) => string) => writeExecutable(at(P.entry), 'x', 0o644)],
  ])('refuses %s with E_LAYOUT and changes nothing', async (_name, arrange) => {
    writeExecutable(at('/usr/local/bin/other'), 'keep');
    arrange(at);
    const before = snapshotTree(root);

    const result = await sandboxUpgrader(root).migrate();

    expect(result).toMatchObject({ ok: false, failure: { code: 'E_LAYOUT' } });
    expect(snapshotTree(root)).toEqual(before);
  });

  it('refuses a direct activation while the record is corrupt (E_RECORD), and status reports it', async () => {
    writeExecutable(at(P.entry), 'v1');
    writeExecutable(at('/staging/candidate'), 'v2');
    const upgrader = sandboxUpgrader(root);
    await upgrader.migrate();
    mkdirSync(at('/etc/aks-flex-node'), { recursive: true });
    writeFileSync(at(P.record), '{"kind":"AgentUpgradeRecord","schemaVersion":99}');
    const before = snapshotTree(root);

    const corrupt = await upgrader.activate({ candidatePath: at('/staging/candidate') });
    const status = await upgrader.status();

    expect(corrupt).toMatchObject({ ok: false, failure: { code: 'E_RECORD' } });
    expect(status).toMatchObject({
      ok: true,
      value: { record: { present: true, valid: false, problem: { code: 'E_RECORD' } } },
    });
    expect(snapshotTree(root)).toEqual(before);
  });
});

describe('layout engine under a sandbox root reached through a symlink', () => {
  it('migrates when the root itself is a symlinked directory (like /tmp -> /private/tmp)', async () => {
    const scratch = makeScratch();
    try {
      const real = join(scratch.root, 'real');
      mkdirSync(real);
      makeSymlink(join(scratch.root, 'alias'), 'real');
      const root = join(scratch.root, 'alias');
      writeExecutable(join(root, P.entry), 'v1');

      const result = await sandboxUpgrader(root).migrate();

      expect(result).toMatchObject({ ok: true, value: { changed: true, currentSlot: 'blue' } });
      expect(readFileSync(join(real, P.blue), 'utf8')).toBe('v1');
    } finally {
      scratch.cleanup();
    }
  });
});
