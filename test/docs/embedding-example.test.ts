import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertBuildCurrent } from '../support/systemd/systemd-host.js';

const EXAMPLE = join(dirname(fileURLToPath(import.meta.url)), '../../examples/embedding.mjs');

/** docs/embedding.md promises a runnable example: run it against the built package. */
describe('examples/embedding.mjs', () => {
  it("migrates, activates through the embedder's service manager and reports the new links", () => {
    assertBuildCurrent();
    const run = spawnSync(process.execPath, [EXAMPLE], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    expect(run.stdout.trim().split('\n')).toEqual([
      'migrated: 5 actions',
      'activated 1.1.0: blue -> green (activated)',
      'current -> green, last-good -> blue',
      'service manager calls: restart, waitHealthy aks-flex-node-green',
    ]);
  });
});
