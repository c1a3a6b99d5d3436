/**
 * The real-API-server harness itself: it fails loudly (naming the build script) when the binaries
 * are missing, cleans up after a failed start, and leaves no process or file behind after stop().
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RealApiServer } from '../support/kube/real-apiserver.js';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

let parentDir: string;
beforeEach(async () => {
  parentDir = await mkdtemp(join(tmpdir(), 'kube-real-harness-'));
});
afterEach(async () => {
  await rm(parentDir, { recursive: true, force: true });
});

describe('the real API server harness', () => {
  it('refuses to start without the built binaries and names the build script', async () => {
    const saved = process.env['AGENT_UPGRADE_KUBE_CACHE'];
    process.env['AGENT_UPGRADE_KUBE_CACHE'] = join(parentDir, 'no-cache');
    try {
      await expect(RealApiServer.start({ parentDir })).rejects.toThrow(/not built.*scripts\/build-kube-apiserver\.sh/s);
    } finally {
      if (saved === undefined) delete process.env['AGENT_UPGRADE_KUBE_CACHE'];
      else process.env['AGENT_UPGRADE_KUBE_CACHE'] = saved;
    }
    expect(await readdir(parentDir)).toEqual([]);
  });

  it('reports the server log and removes everything when the server cannot start', async () => {
    await expect(RealApiServer.start({ parentDir, extraArgs: ['--no-such-flag'] })).rejects.toThrow(
      /kube-apiserver did not become ready \(it exited\)[\s\S]*unknown flag: --no-such-flag/,
    );
    expect(await readdir(parentDir)).toEqual([]);
  }, 60_000);

  it('stops etcd and the API server and removes its temp dir', async () => {
    const server = await RealApiServer.start({ parentDir });
    const pids = server.pids;
    expect(pids).toHaveLength(2);
    expect(pids.every(alive)).toBe(true);
    await server.stop();
    expect(pids.filter(alive)).toEqual([]);
    expect(await readdir(parentDir)).toEqual([]);
  }, 150_000);
});
