import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, it } from 'vitest';
import { expectExampleRun } from '../support/embedding-example.js';
import { assertBuildCurrent } from '../support/systemd/systemd-host.js';

const EXAMPLE = resolve(import.meta.dirname, '../../examples/embedding.ts');

/** docs/embedding.md walks through a runnable example: run it against the built package. */
describe('examples/embedding.ts', () => {
  it("migrates, activates through the embedder's pidfile service manager, and fails a candidate that exits", () => {
    assertBuildCurrent();
    const run = spawnSync(process.execPath, [EXAMPLE], { encoding: 'utf8', timeout: 60_000 });
    expectExampleRun(run);
  });
});
