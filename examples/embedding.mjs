#!/usr/bin/env node
// Embedding agent-upgrade in another agent (docs/embedding.md). Runs as is after `npm run build`:
//   node examples/embedding.mjs
// A sandbox host with a legacy binary is migrated, then a new binary is activated through the
// embedder's own ServiceManager — here a tiny one that only records what it was asked to do.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createUpgrader, FLEX_PROFILE } from 'agent-upgrade';

/**
 * The embedder's service manager: it owns how its agent runs. This one only records what it is
 * asked to do and reports the restarted agent healthy; a real one restarts a process and checks it.
 */
class RecordingServiceManager {
  name = 'none';
  calls = [];
  async convergeAssets() {
    return { changed: false };
  }
  async assetsCurrent() {
    return true;
  }
  async activity() {
    return 'active';
  }
  async restart() {
    this.calls.push('restart');
    return { restarted: true };
  }
  async scheduleRestart() {
    this.calls.push('scheduleRestart');
  }
  async mainExecutable() {
    return null;
  }
  // Automatic restarts since `restartEpoch` began (a crash inside the watch window); nulls when
  // this manager cannot count them, as here.
  async restartCount() {
    return { restartEpoch: null, restarts: null };
  }
  async waitHealthy(expectedPath) {
    this.calls.push(`waitHealthy ${expectedPath.split('/').pop()}`);
    return { kind: 'healthy' };
  }
}

const root = mkdtempSync(join(tmpdir(), 'agent-upgrade-embedding-'));
try {
  const write = (path, text) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
    chmodSync(join(root, path), 0o755);
  };
  write('usr/local/bin/aks-flex-node', '#!/bin/sh\necho "my-agent version 1.0.0"\n');
  write('candidate', '#!/bin/sh\necho "my-agent version 1.1.0"\n');

  const services = new RecordingServiceManager();
  const created = createUpgrader({
    // The flex profile, re-rooted into the sandbox, accepting script agents for this example.
    config: {
      ...FLEX_PROFILE,
      root,
      agent: { ...FLEX_PROFILE.agent, allowScripts: true },
      // No watch window for this sketch (the default keeps the candidate on trial for 10 minutes,
      // and activate answers when the window ends): nothing here runs to be watched.
      health: { ...FLEX_PROFILE.health, watchMs: 0 },
      container: { ...FLEX_PROFILE.container, manager: 'none' },
    },
    identity: {
      euid: process.geteuid?.() ?? 0,
      arch: process.arch === 'arm64' ? 'arm64' : 'amd64',
      pid: process.pid,
      command: 'embedding example',
    },
    logger: {
      debug() {},
      info() {},
      warn() {},
      error() {},
      child() {
        return this;
      },
    },
    overrides: { serviceManager: services },
  });
  if (!created.ok) throw new Error(`${created.failure.code}: ${created.failure.message}`);
  const upgrader = created.value;

  const migrated = await upgrader.migrate();
  if (!migrated.ok) throw new Error(`${migrated.failure.code}: ${migrated.failure.message}`);
  console.log(`migrated: ${migrated.value.actions.length} actions`);

  const activated = await upgrader.activate({ candidatePath: join(root, 'candidate') });
  if (!activated.ok) throw new Error(`${activated.failure.code}: ${activated.failure.message}`);
  console.log(
    `activated ${activated.value.candidateVersion}: ${activated.value.from} -> ${activated.value.to} (${activated.value.outcome})`,
  );

  const status = await upgrader.status();
  if (!status.ok) throw new Error(status.failure.message);
  console.log(`current -> ${status.value.links.current.slot}, last-good -> ${status.value.links.lastGood.slot}`);
  console.log(`service manager calls: ${services.calls.join(', ') || 'none'}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
