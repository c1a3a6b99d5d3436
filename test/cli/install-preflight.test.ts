import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { deriveLayout, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import { describeStep } from '../../src/domain/node/activation/upgrade-plan.js';
import type { ServiceActivity, ServiceManager } from '../../src/ports/node/service-manager.js';
import { makeScratch, snapshotTree, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';

const URL = 'http://127.0.0.1:9/aks-flex-node-linux-amd64.tar.gz';

/** A service manager that only answers questions: the preflight asks, never acts. */
function reportingService(activity: ServiceActivity): ServiceManager {
  const acted = (): never => {
    throw new Error('a preflight must not act on the service');
  };
  return {
    name: 'memory',
    convergeAssets: acted,
    assetsCurrent: async () => true,
    activity: async () => activity,
    currentRun: async () => null,
    restart: acted,
    scheduleRestart: acted,
    restartCount: async () => ({ restartEpoch: null, restarts: null }),
    mainExecutable: async () => null,
    waitHealthy: acted,
  };
}

/** `install --preflight` lists a restart only when the service manager has a running agent to restart. */
describe('install --preflight follows the service manager and the agent state', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let layout: SlotLayout;
  beforeEach(async () => {
    scratch = makeScratch();
    writeExecutable(join(scratch.root, 'usr/local/bin/aks-flex-node'), '#!/bin/sh\necho 1.0.0\n');
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    writeFileSync(
      join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json'),
      JSON.stringify({ service: { manager: 'none' }, container: { manager: 'none' } }),
    );
    expect((await runCliInMemory(['migrate', '--root', scratch.root])).exitCode).toBe(0);
    const derived = deriveLayout({ root: scratch.root, agentName: FLEX_PROFILE.agent.name, ...FLEX_PROFILE.paths });
    if (!derived.ok) throw new Error(derived.failure.message);
    layout = derived.value;
  });
  afterEach(() => scratch.cleanup());

  const serviceSteps = (): string[] => [
    describeStep(layout, { kind: 'restart-service' }),
    describeStep(layout, { kind: 'wait-healthy', slot: 'green' }),
  ];
  const preflight = async (service?: ServiceManager): Promise<{ exitCode: number; actions: string[] }> => {
    const run = await runCliInMemory(
      ['install', '--url', URL, '--preflight', '--root', scratch.root, '--json'],
      service === undefined ? {} : { overrides: { serviceManager: service } },
    );
    const document = JSON.parse(run.stdout) as { preflight?: { actions: string[] } };
    return { exitCode: run.exitCode, actions: document.preflight?.actions ?? [] };
  };

  it('a running agent: the restart and the health wait on the target slot', async () => {
    const plan = await preflight(reportingService('active'));
    expect({
      exitCode: plan.exitCode,
      service: plan.actions.filter((action) => serviceSteps().includes(action)),
    }).toEqual({ exitCode: 0, service: serviceSteps() });
  });

  it.each([
    ['service manager none', undefined],
    ['a stopped agent (it stays stopped)', reportingService('inactive')],
  ])('%s: the same plan without the restart and the health wait, nothing changed', async (_name, service) => {
    const running = await preflight(reportingService('active'));
    const before = snapshotTree(scratch.root);
    const plan = await preflight(service);
    expect({ exitCode: plan.exitCode, actions: plan.actions }).toEqual({
      exitCode: 0,
      actions: running.actions.filter((action) => !serviceSteps().includes(action)),
    });
    expect(snapshotTree(scratch.root)).toEqual(before);
  });
});
