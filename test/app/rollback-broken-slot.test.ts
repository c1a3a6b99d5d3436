import { mkdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryServiceManager } from '../../src/adapters/node/memory/memory-service-manager.js';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { makeScratch, makeSymlink, snapshotTree, writeExecutable } from '../support/real-tree.js';
import {
  FLEX_SANDBOX_PATHS as P,
  sandboxUpgrader,
  scriptAgent as agent,
  digestOf,
} from '../support/sandbox-upgrader.js';

/**
 * A rollback from a broken slot (docs/operations.md#broken-slots) repairs current, but it never
 * goes back to that slot: current and last-good only ever name a slot with a runnable binary.
 */
describe('rollback from a current slot that is a directory (real files, modelled service)', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const at = (path: string): string => join(scratch.root, path);

  beforeEach(() => {
    scratch = makeScratch();
    mkdirSync(at(P.blue), { recursive: true });
    writeExecutable(at(P.green), agent('1.0.0'));
    makeSymlink(at(P.current), 'aks-flex-node-blue');
    makeSymlink(at(P.lastGood), 'aks-flex-node-green');
    makeSymlink(at(P.entry), '../lib/aks-flex-node/aks-flex-node-current');
  });
  afterEach(() => scratch.cleanup());

  const upgraderWith = (greenBehaviour: 'healthy' | 'crash-on-start') =>
    sandboxUpgrader(
      scratch.root,
      {},
      {
        serviceManager: new MemoryServiceManager({
          fs: new NodeFileSystem(),
          execStart: at(P.current),
          behaviourOf: (digest) => (digest === digestOf(agent('1.0.0')) ? greenBehaviour : 'healthy'),
        }),
      },
    );

  it('points current at the healthy last-good and restarts the agent into it', async () => {
    const result = await upgraderWith('healthy').rollback();
    expect(result).toMatchObject({ ok: true, value: { outcome: 'rolled-back', from: 'blue', to: 'green' } });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-green');
  });

  it('when last-good fails too, current stays on it rather than going back to the directory', async () => {
    const result = await upgraderWith('crash-on-start').rollback();
    expect(result).toMatchObject({ ok: true, value: { outcome: 'degraded', failure: { code: 'E_UNHEALTHY' } } });
    expect({ current: readlinkSync(at(P.current)), blue: snapshotTree(scratch.root)[P.blue] }).toEqual({
      current: 'aks-flex-node-green',
      blue: 'dir 755',
    });
  });
});
