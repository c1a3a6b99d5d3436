import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServiceManager } from '../../src/ports/node/service-manager.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const SLOTS = 'usr/local/lib/aks-flex-node';

interface SlotView {
  readonly sha256: string | null;
  readonly version: string | null;
}
interface StatusDocument {
  readonly ok: boolean;
  readonly error?: { readonly code: string };
  readonly status: {
    readonly layout: { readonly condition: string };
    readonly slots: { readonly blue: SlotView; readonly green: SlotView };
    readonly quarantine: readonly string[];
    readonly highestCommittedVersion: string | null;
  };
}

const agentScript = (version: string): string => `#!/bin/sh\necho ${version}\n`;
const digestOf = (text: string): string => createHash('sha256').update(text).digest('hex');

/** A running agent that is healthy on green only: an activation onto blue is rolled back to green. */
const healthyOnGreenOnly: ServiceManager = {
  name: 'memory',
  convergeAssets: async () => ({ changed: false }),
  assetsCurrent: async () => true,
  activity: async () => 'active',
  currentRun: async () => null,
  restart: async () => ({ restarted: true }),
  scheduleRestart: async () => undefined,
  restartCount: async () => ({ restartEpoch: null, restarts: null }),
  mainExecutable: async () => null,
  waitHealthy: async (expectedPath) =>
    expectedPath.endsWith('-green') ? { kind: 'healthy' } : { kind: 'unhealthy', reason: 'it crashed on start' },
};

/** status reports what the state file knows: slot versions for the very bytes, quarantine, the never-downgrade mark. */
describe('status shows versions, quarantine and the highest committed version', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const at = (path: string): string => join(scratch.root, path);
  const status = async (): Promise<{ exitCode: number; document: StatusDocument }> => {
    const run = await runCliInMemory(['status', '--root', scratch.root, '--json']);
    return { exitCode: run.exitCode, document: JSON.parse(run.stdout) as StatusDocument };
  };

  beforeEach(async () => {
    scratch = makeScratch();
    writeExecutable(at('usr/local/bin/aks-flex-node'), agentScript('1.0.0'));
    writeExecutable(at('staging/v2'), agentScript('2.0.0'));
    writeExecutable(at('staging/v3'), agentScript('3.0.0'));
    mkdirSync(at('etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      at('etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' }, agent: { allowScripts: true } }),
    );
    expect((await runCliInMemory(['migrate', '--root', scratch.root])).exitCode).toBe(0);
    expect((await runCliInMemory(['activate', at('staging/v2'), '--root', scratch.root])).exitCode).toBe(0);
  });
  afterEach(() => scratch.cleanup());

  it("after an activation: the active slot's version and the highest committed version; nothing quarantined", async () => {
    const { exitCode, document } = await status();
    expect({ exitCode, ok: document.ok }).toEqual({ exitCode: 0, ok: true });
    expect(document.status.slots.green).toMatchObject({ sha256: digestOf(agentScript('2.0.0')), version: '2.0.0' });
    expect({ quarantine: document.status.quarantine, highest: document.status.highestCommittedVersion }).toEqual({
      quarantine: [],
      highest: '2.0.0',
    });
  });

  it('a rolled-back candidate: its digest is quarantined, the committed version stays', async () => {
    const failed = await runCliInMemory(['activate', at('staging/v3'), '--root', scratch.root], {
      overrides: { serviceManager: healthyOnGreenOnly },
    });
    expect(failed.exitCode).toBe(3);
    const { exitCode, document } = await status();
    expect(exitCode).toBe(0);
    expect({ quarantine: document.status.quarantine, highest: document.status.highestCommittedVersion }).toEqual({
      quarantine: [digestOf(agentScript('3.0.0'))],
      highest: '2.0.0',
    });
    expect(document.status.slots.green.version).toBe('2.0.0');
  });

  it('a slot whose bytes are not the ones the state file describes has no version', async () => {
    writeFileSync(at(`${SLOTS}/aks-flex-node-green`), agentScript('2.0.1'));
    const { document } = await status();
    expect(document.status.slots.green).toEqual(
      expect.objectContaining({ sha256: digestOf(agentScript('2.0.1')), version: null }),
    );
    expect(document.status.highestCommittedVersion).toBe('2.0.0');
  });

  it("an invalid layout: exit 1 with the whole report, the layout's code as the error, text and JSON alike", async () => {
    rmSync(at(`${SLOTS}/aks-flex-node-blue`));
    mkdirSync(at(`${SLOTS}/aks-flex-node-blue`));
    const { exitCode, document } = await status();
    expect({
      exitCode,
      ok: document.ok,
      code: document.error?.code,
      condition: document.status.layout.condition,
    }).toEqual({ exitCode: 1, ok: false, code: 'E_LAYOUT', condition: 'invalid' });
    expect(document.status.slots.green.version).toBe('2.0.0');
    const text = await runCliInMemory(['status', '--root', scratch.root]);
    expect({
      exitCode: text.exitCode,
      reported: text.stdout.trim().split('\n').length > 1,
      errorLines: text.stderr.trim().split('\n').length,
    }).toEqual({ exitCode: 1, reported: true, errorLines: 1 });
    expect(readFileSync(at(`${SLOTS}/aks-flex-node-green`), 'utf8')).toBe(agentScript('2.0.0'));
  });
});
