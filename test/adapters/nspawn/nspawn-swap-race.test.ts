import { lstatSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { snapshotTree } from '../../support/real-tree.js';
import { listDir, makeNspawnScratch, type NspawnScratch } from './nspawn-fixture.js';

/*
 * The check-then-use race, made deterministic without any hook in production code: node's
 * fs/promises is wrapped for this file only, so the container's move can be played at an exact
 * point of the adapter's sequence — after a directory was opened, before it is used. An
 * lstat-then-use implementation writes to the host in these tests; the descriptor-relative one
 * cannot, because the directory it holds open is no longer reachable through the swapped path.
 */

type Step = 'mkdir' | 'readdir';

const race = vi.hoisted(() => ({ before: new Map<string, () => void>() }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  /** Runs (once) the container's move registered for `step`, then the real call. */
  const interposed =
    <A extends unknown[], R>(step: Step, real: (...args: A) => R) =>
    (...args: A): R => {
      const move = race.before.get(step);
      race.before.delete(step);
      move?.();
      return real(...args);
    };
  const mkdir = interposed('mkdir', actual.mkdir) as typeof actual.mkdir;
  const readdir = interposed('readdir', actual.readdir) as typeof actual.readdir;
  return { ...actual, mkdir, readdir, default: { ...actual, mkdir, readdir } };
});

let host: NspawnScratch;
let kube1: string;

beforeEach(() => {
  host = makeNspawnScratch();
  kube1 = join(host.machinesDir, 'kube1');
  race.before.clear();
});

afterEach(() => {
  host.cleanup();
});

describe('NspawnContainerRootfs under a racing container', () => {
  it('writes into the directory it opened when usr/local/bin is swapped for a host link after the walk', async () => {
    mkdirSync(join(kube1, 'usr/local/bin'), { recursive: true });
    const hostBefore = snapshotTree(join(host.root, 'host'));
    // The sweep lists the directory right after the walk opened it: swap it there.
    race.before.set('readdir', () => {
      renameSync(join(kube1, 'usr/local/bin'), join(kube1, 'usr/local/bin-moved'));
      symlinkSync(host.hostBinDir, join(kube1, 'usr/local/bin'));
    });

    await host.rootfs().install('kube1', host.source);

    expect(race.before.size).toBe(0); // the move did happen
    expect(snapshotTree(join(host.root, 'host'))).toEqual(hostBefore);
    expect(readFileSync(join(kube1, 'usr/local/bin-moved/aks-flex-node'), 'utf8')).toBe('agent v2\n');
    expect(listDir(join(kube1, 'usr/local/bin-moved'))).toEqual(['aks-flex-node']);
  });

  it('keeps a directory it is creating inside the rootfs when an ancestor is swapped for a host link', async () => {
    mkdirSync(join(kube1, 'usr/local'), { recursive: true });
    const hostBefore = snapshotTree(join(host.root, 'host'));
    // usr/local is open; bin is about to be made in it. The container swaps usr for the host's.
    race.before.set('mkdir', () => {
      renameSync(join(kube1, 'usr'), join(kube1, 'usr-moved'));
      symlinkSync(join(host.root, 'host', 'usr'), join(kube1, 'usr'));
    });

    await host.rootfs().install('kube1', host.source);

    expect(race.before.size).toBe(0);
    expect(snapshotTree(join(host.root, 'host'))).toEqual(hostBefore);
    expect(readFileSync(join(kube1, 'usr-moved/local/bin/aks-flex-node'), 'utf8')).toBe('agent v2\n');
  });

  it('replaces a target swapped for a host link after the check with a regular file, never writing through it', async () => {
    mkdirSync(join(kube1, 'usr/local/bin'), { recursive: true });
    writeFileSync(host.target, 'old copy\n');
    const hostBefore = snapshotTree(join(host.root, 'host'));
    race.before.set('readdir', () => {
      renameSync(host.target, `${host.target}-old`);
      symlinkSync(host.hostBinary, host.target);
    });

    await host.rootfs().install('kube1', host.source);

    expect(race.before.size).toBe(0);
    expect(snapshotTree(join(host.root, 'host'))).toEqual(hostBefore);
    expect(lstatSync(host.target).isFile()).toBe(true);
    expect(readFileSync(host.target, 'utf8')).toBe('agent v2\n');
  });
});
