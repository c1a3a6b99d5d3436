import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startHostileServer, stallBeforeHeaders, type HostileServer } from '../support/http/hostile-server.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';
import { assertBuildCurrent, CLI } from '../support/systemd/systemd-host.js';
import { waitFor } from '../support/wait-for.js';
import { newCanary } from './harness.js';

const LOCK = '/run/aks-flex-node-agent-upgrade.lock';
/** The install holds the lock while its download stalls; every wait here is that short. */
const WAIT_MS = 15_000;

/**
 * Invariant I8 on the lock's sinks (docs/security.md#secrets-in-urls): the lock file records who
 * holds the host lock and `status` shows it, so a holder described by its raw argv would carry a
 * URL secret given as an option before the command (`--url=…?sig=… install`, which the parser
 * accepts). Run through the real entry point, since the in-memory CLI harness has no argv.
 */
describe('I8: the lock holder of an install never carries the URL secret', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let server: HostileServer;
  let install: ChildProcess | null = null;

  beforeAll(() => assertBuildCurrent());

  beforeEach(async () => {
    scratch = makeScratch();
    server = await startHostileServer();
    server.route('/a.tgz', stallBeforeHeaders());
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho v1.0.0\n');
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'), '{"service":{"manager":"none"}}');
    expect(cli(['migrate', '--root', scratch.root, '--json']).status).toBe(0);
  });

  afterEach(async () => {
    install?.kill('SIGKILL');
    install = null;
    await server.close();
    scratch.cleanup();
  });

  const cli = (args: readonly string[]) =>
    spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: WAIT_MS });

  it.each([
    ['an option before the command', (url: string) => [`--url=${url}`, 'install']],
    ['an option after the command', (url: string) => ['install', '--url', url]],
  ])('with the URL as %s', async (_case, argsFor) => {
    const canary = newCanary();
    const url = server.url(`/a.tgz?sv=2024&sig=${canary}`);
    install = spawn(process.execPath, [CLI, ...argsFor(url), '--root', scratch.root], { stdio: 'ignore' });
    // The lock file keeps the last holder's note (migrate's): wait until status sees the install hold it.
    let status = cli(['status', '--root', scratch.root, '--json']);
    const held = await waitFor(() => {
      status = cli(['status', '--root', scratch.root, '--json']);
      return holderOf(status.stdout) !== null;
    }, WAIT_MS);
    expect(held).toBe(true);
    expect(holderOf(status.stdout)).toMatchObject({ kind: 'known', command: 'agent-upgrade install' });
    const lockFile = join(scratch.root, LOCK);
    expect(readFileSync(lockFile, 'utf8')).not.toContain(canary);
    expect(status.stdout + status.stderr).not.toContain(canary);
    const text = cli(['status', '--root', scratch.root]);
    expect(text.stdout + text.stderr).not.toContain(canary);
  });
});

function holderOf(statusJson: string): { kind: string; command?: string } | null {
  return (JSON.parse(statusJson) as { status: { lock: { holder: { kind: string; command?: string } | null } } }).status
    .lock.holder;
}
