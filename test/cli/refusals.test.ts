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
    expect({
      exitCode: run.exitCode,
      code: (JSON.parse(run.stdout) as { error: { code: string } }).error.code,
    }).toEqual({ exitCode: 1, code: 'E_NOT_ROOT' });
    expect(demoSandboxes()).toEqual(before);
  });

  it('supervise onto a socket path held by a regular file: E_IO (exit 1), the file and the host untouched', async () => {
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'supervisor' } }),
    );
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
    mkdirSync(join(scratch.root, 'run'));
    writeFileSync(join(scratch.root, 'run/aks-flex-node-supervisor.sock'), 'not a socket');
    const before = snapshotTree(scratch.root, []);
    const run = await runCliInMemory(['supervise', '--root', scratch.root, '--json']);
    expect({
      exitCode: run.exitCode,
      code: (JSON.parse(run.stdout) as { error: { code: string } }).error.code,
    }).toEqual({ exitCode: 1, code: 'E_IO' });
    expect(readFileSync(join(scratch.root, 'run/aks-flex-node-supervisor.sock'), 'utf8')).toBe('not a socket');
    expect(snapshotTree(scratch.root, [])).toEqual(before);
  });

  it('daemon with a kubeconfig that does not exist: E_CLUSTER (exit 1), the host untouched', async () => {
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({
        agent: { mode: 'sidecar' },
        service: { manager: 'none' },
        cluster: { kubeconfig: join(scratch.root, 'missing-kubeconfig.yaml') },
      }),
    );
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
    const before = snapshotTree(scratch.root, []);
    const run = await runCliInMemory(['daemon', '--root', scratch.root, '--json']);
    expect({
      exitCode: run.exitCode,
      code: (JSON.parse(run.stdout) as { error: { code: string } }).error.code,
    }).toEqual({ exitCode: 1, code: 'E_CLUSTER' });
    expect(snapshotTree(scratch.root, [])).toEqual(before);
  });
});

/** Configuration refusals through the CLI: one JSON error document with E_CONFIG, nothing written. */
describe('refusals of configurations that pass the schema but cannot be rendered or run', () => {
  let scratch: ReturnType<typeof makeScratch>;
  beforeEach(() => {
    scratch = makeScratch();
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
  });
  afterEach(() => scratch.cleanup());

  const refusals: ReadonlyArray<readonly [string, string]> = [
    [
      'a newline in agent.args (a unit directive injected)',
      JSON.stringify({ agent: { args: ['agent', '--config', '/etc/a.json\nExecStartPre=/bin/touch /tmp/owned'] } }),
    ],
    ['a carriage return in agent.args', JSON.stringify({ agent: { args: ['agent\r'] } })],
    ['a control character in a path', JSON.stringify({ paths: { record: '/etc/aks-flex-node/\u001b.json' } })],
    ['objects nested 50 000 deep', `{"x":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`],
    ['health.stableMs above health.timeoutMs', JSON.stringify({ health: { timeoutMs: 1_000, stableMs: 5_000 } })],
    ['health.pollMs above health.stableMs', JSON.stringify({ health: { stableMs: 100, pollMs: 500 } })],
    [
      'a start limit never reached',
      JSON.stringify({ service: { restartSec: 120, startLimitBurst: 5, startLimitIntervalSec: 300 } }),
    ],
    [
      'the record and the state on one path',
      JSON.stringify({ paths: { state: '/etc/aks-flex-node/agent-upgrade-signal.json' } }),
    ],
    ['a path that is not clean', JSON.stringify({ paths: { slotDir: '/usr/local/lib/../lib/agent' } })],
    [
      'a quote in the slot directory (systemd cannot run the current link from it)',
      JSON.stringify({ paths: { slotDir: "/usr/local/lib/agent's" } }),
    ],
  ];

  it.each(refusals)(
    'migrate refuses %s: E_CONFIG (exit 2) as JSON, and no unit or slot is written',
    async (_name, text) => {
      writeFileSync(join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'), text);
      const before = snapshotTree(scratch.root, []);
      const run = await runCliInMemory(['migrate', '--root', scratch.root, '--json']);
      expect({ exitCode: run.exitCode, document: JSON.parse(run.stdout) as unknown }).toMatchObject({
        exitCode: 2,
        document: { ok: false, error: { code: 'E_CONFIG' } },
      });
      expect(snapshotTree(scratch.root, [])).toEqual(before);
    },
  );

  it.each(refusals)('status refuses %s the same way', async (_name, text) => {
    writeFileSync(join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'), text);
    const run = await runCliInMemory(['status', '--root', scratch.root, '--json']);
    expect({ exitCode: run.exitCode, document: JSON.parse(run.stdout) as unknown }).toMatchObject({
      exitCode: 2,
      document: { ok: false, error: { code: 'E_CONFIG' } },
    });
  });

  it.each(["'", '"', '\\'])(
    'migrate refuses a --root with %s under systemd, which cannot run a program there: E_USAGE (exit 2), nothing written',
    async (character) => {
      const root = join(scratch.root, `quote${character}x/root`);
      writeExecutable(join(root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1\n');
      const before = snapshotTree(scratch.root, []);
      const run = await runCliInMemory(['migrate', '--root', root, '--json']);
      expect({ exitCode: run.exitCode, document: JSON.parse(run.stdout) as unknown }).toMatchObject({
        exitCode: 2,
        document: { ok: false, error: { code: 'E_USAGE' } },
      });
      expect(snapshotTree(scratch.root, [])).toEqual(before);
    },
  );

  it('refuses a --root with a newline: E_USAGE (exit 2) as JSON', async () => {
    const run = await runCliInMemory(['status', '--root', `${scratch.root}\nx`, '--json']);
    expect({ exitCode: run.exitCode, document: JSON.parse(run.stdout) as unknown }).toMatchObject({
      exitCode: 2,
      document: { ok: false, error: { code: 'E_USAGE' } },
    });
  });
});
