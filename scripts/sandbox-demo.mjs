#!/usr/bin/env node
// Shows the layout engine on a throw-away sandbox: a legacy single-file install is migrated to
// the blue/green layout, migrated again (nothing to do), and inspected. No root, no systemd.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'agent-upgrade');
const root = mkdtempSync(join(tmpdir(), 'agent-upgrade-demo-'));
try {
  mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
  mkdirSync(join(root, 'etc/aks-flex-node'), { recursive: true });
  const legacy = join(root, 'usr/local/bin/aks-flex-node');
  writeFileSync(legacy, '#!/bin/sh\necho "aks-flex-node v1.0.0"\n');
  chmodSync(legacy, 0o755);
  writeFileSync(join(root, 'etc/aks-flex-node/agent-upgrade.json'), JSON.stringify({ service: { manager: 'none' } }));
  for (const args of [['status'], ['migrate'], ['migrate'], ['status']]) {
    console.log(`\n$ agent-upgrade ${args.join(' ')} --root ${root}`);
    const run = spawnSync(process.execPath, [bin, ...args, '--root', root], { stdio: 'inherit' });
    if (run.status !== 0) process.exit(run.status ?? 1);
  }
  console.log(`\n$ ${legacy}`);
  spawnSync(legacy, { stdio: 'inherit' });
} finally {
  rmSync(root, { recursive: true, force: true });
}
