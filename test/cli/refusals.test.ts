import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

/** Failure paths of the newer commands: a stable code, and nothing created or changed. */
describe('refusals of demo, supervise and daemon', () => {
  let scratch: ReturnType<typeof makeScratch>;
  beforeEach(() => {
    scratch = makeScratch();
  });
  afterEach(() => scratch.cleanup());

  const demoSandboxes = () => readdirSync(tmpdir()).filter((name) => name.startsWith('agent-upgrade-demo-'));

  it('demo --systemd without root: E_NOT_ROOT (exit 1), and no sandbox is created', async () => {
    const before = demoSandboxes();
    const run = await runCliInMemory(['demo', '--systemd', '--json'], { euid: 1000 });
    expect({ exitCode: run.exitCode, code: (JSON.parse(run.stdout) as { error: { code: string } }).error.code }).toEqual({ exitCode: 1, code: 'E_NOT_ROOT' });
    expect(demoSandboxes()).toEqual(before);
  });

  it('supervise onto a socket path held by a regular file: E_IO (exit 1), the file and the host untouched', async () => {
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'), JSON.stringify({ service: { manager: 'supervisor' } }));
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
    mkdirSync(join(scratch.root, 'run'));
    writeFileSync(join(scratch.root, 'run/aks-flex-node-supervisor.sock'), 'not a socket');
    const before = snapshotTree(scratch.root, []);
    const run = await runCliInMemory(['supervise', '--root', scratch.root, '--json']);
    expect({ exitCode: run.exitCode, code: (JSON.parse(run.stdout) as { error: { code: string } }).error.code }).toEqual({ exitCode: 1, code: 'E_IO' });
    expect(readFileSync(join(scratch.root, 'run/aks-flex-node-supervisor.sock'), 'utf8')).toBe('not a socket');
    expect(snapshotTree(scratch.root, [])).toEqual(before);
  });

  it('daemon with a kubeconfig that does not exist: E_CLUSTER (exit 1), the host untouched', async () => {
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ agent: { mode: 'sidecar' }, service: { manager: 'none' }, cluster: { kubeconfig: join(scratch.root, 'missing-kubeconfig.yaml') } }),
    );
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
    const before = snapshotTree(scratch.root, []);
    const run = await runCliInMemory(['daemon', '--root', scratch.root, '--json']);
    expect({ exitCode: run.exitCode, code: (JSON.parse(run.stdout) as { error: { code: string } }).error.code }).toEqual({ exitCode: 1, code: 'E_CLUSTER' });
    expect(snapshotTree(scratch.root, [])).toEqual(before);
  });
});
