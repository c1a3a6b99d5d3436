#!/usr/bin/env node
// Embedding agent-upgrade in another agent (docs/embedding.md): `my-agent`, which knows nothing of
// agent-upgrade, run by its own pidfile service manager. Node runs it as is (type stripping):
//   npm run build && node examples/embedding.ts
// A sandbox host with a legacy binary is migrated; v1.1.0 is activated; v1.2.0, which exits half
// a second after starting, is rolled back — a failure that says so, never a success.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentProfile, createUpgrader } from 'agent-upgrade';
import { PidfileServiceManager } from './pidfile-service-manager.ts';

/** A version of the agent: answers `version`, then runs (or exits after `livesMs`). */
const agent = (version: string, livesMs: number | null): string =>
  [
    '#!/bin/sh',
    `if [ "$1" = version ]; then echo "my-agent version ${version}"; exit 0; fi`,
    livesMs === null ? 'while :; do sleep 1; done' : `sleep ${livesMs / 1000}; exit 1`,
    '',
  ].join('\n');

const root = mkdtempSync(join(tmpdir(), 'agent-upgrade-embedding-'));
const write = (path: string, text: string): string => {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
  chmodSync(join(root, path), 0o755);
  return join(root, path);
};
const services = new PidfileServiceManager({
  entry: write('usr/local/bin/my-agent', agent('1.0.0', null)),
  pidfile: join(root, 'my-agent.pid'),
});
try {
  // The `agent` profile of this name: /usr/local/bin/my-agent, /usr/local/lib/my-agent, sidecar
  // mode, no cluster. Re-rooted into the sandbox; script agents allowed for this example; a short
  // health gate and watch window so it runs in seconds.
  const profile = agentProfile('my-agent');
  const created = createUpgrader({
    config: {
      ...profile,
      root,
      agent: { ...profile.agent, allowScripts: true },
      health: { ...profile.health, timeoutMs: 10_000, stableMs: 1_000, pollMs: 100, watchMs: 1_500 },
    },
    // identity and logger: the defaults (this process; JSON lines on stderr at info).
    overrides: { serviceManager: services },
  });
  if (!created.ok) throw new Error(`${created.failure.code}: ${created.failure.message}`);
  const upgrader = created.value;

  const migrated = await upgrader.migrate();
  if (!migrated.ok) throw new Error(`${migrated.failure.code}: ${migrated.failure.message}`);
  console.log(`migrated: ${migrated.value.actions.length} actions`);
  services.start();

  const activated = await upgrader.activate({ candidatePath: write('staging/v1.1.0', agent('1.1.0', null)) });
  if (!activated.ok) throw new Error(`${activated.failure.code}: ${activated.failure.message}`);
  const { candidateVersion, from, to, outcome } = activated.value;
  console.log(`activated ${candidateVersion}: ${from} -> ${to} (${outcome})`);

  // A rolled-back activation is not ok: the failure's code says why, `activation` what happened.
  const broken = await upgrader.activate({ candidatePath: write('staging/v1.2.0', agent('1.2.0', 500)) });
  if (broken.ok) throw new Error('a candidate that exits after half a second was kept');
  console.log(`v1.2.0 refused: ${broken.failure.code}, ${broken.activation?.outcome ?? 'nothing changed'}`);

  const status = await upgrader.status();
  if (!status.ok) throw new Error(status.failure.message);
  const { current, lastGood } = status.value.links;
  const running = (await services.mainExecutable())?.split('/').pop() ?? 'nothing';
  console.log(`current -> ${current.slot}, last-good -> ${lastGood.slot}, the agent runs ${running}`);
} finally {
  await services.stop();
  rmSync(root, { recursive: true, force: true });
}
