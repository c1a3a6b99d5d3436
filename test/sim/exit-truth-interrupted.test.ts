/**
 * Interrupted activations: a signal at every point of one, and a direct activation killed after
 * its switch that the next daemon start resolves.
 */
import { describe, expect, it } from 'vitest';
import type { TreeSpec } from '../../src/adapters/node/memory/memory-file-system.js';
import { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { boot, CANDIDATE, endedWithoutClaim, exe, linkText, MANAGED } from './exit-truth-world.js';
import { agentScript, CONFIG, digestOf, LAYOUT, SIDECAR_CONFIG } from './managed-world.js';

/**
 * SIGINT/SIGTERM/SIGHUP at every point of an activation: the signal aborts after the k-th
 * mutating op. Whatever k, the activation ends with the candidate activated (the signal came
 * after the verdict), or with current back on the previous binary, no marker left, and the
 * candidate not quarantined (the signal, not the candidate, ended it).
 */
describe.each(['healthy', 'crash-after-start'] as const)(
  'a signal at every point of an activation (%s candidate)',
  (behaviour) => {
    const scenario = {
      tree: MANAGED,
      behaviour,
      run: (upgrader: Upgrader) => upgrader.activate({ candidatePath: CANDIDATE }),
    };

    it('ends activated, rolled back or refused, never with the candidate left unjudged', async () => {
      const free = await boot(scenario);
      const before = free.fs.opCount;
      expect(endedWithoutClaim(await scenario.run(free.upgrader))).toBe(true);
      const opCount = free.fs.opCount - before;
      const broken: string[] = [];
      const outcomes: Record<string, number> = {};
      for (let at = 0; at <= opCount; at += 1) {
        const host = await boot(scenario);
        const controller = new AbortController();
        const first = host.fs.opCount;
        host.fs.beforeMutation(() => {
          if (host.fs.opCount - first >= at) controller.abort();
        });
        const result = await host.upgrader.activate({ candidatePath: CANDIDATE, signal: controller.signal });
        host.fs.beforeMutation(null);
        const report = result.ok ? result.value : result.activation;
        const outcome =
          report === null
            ? `refused ${result.ok ? '' : result.failure.code}`
            : `${report.outcome}${report.failure?.code === 'E_INTERRUPTED' ? ' (interrupted)' : ''}`;
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
        const snapshot = host.fs.snapshot();
        const current = linkText(snapshot, LAYOUT.current);
        const marker = snapshot[LAYOUT.activation] !== undefined;
        const state = snapshot[LAYOUT.state];
        const quarantined =
          state?.kind === 'file' &&
          /"quarantine": \[\s*"/.test(
            new TextDecoder().decode((await host.fs.readFile(LAYOUT.state, 65536)) ?? new Uint8Array()),
          );
        const fine =
          outcome === 'activated'
            ? behaviour === 'healthy' && current === 'aks-flex-node-green'
            : current === 'aks-flex-node-blue' && !marker && (outcome !== 'rolled-back (interrupted)' || !quarantined);
        if (!fine)
          broken.push(
            `abort after op ${at}: ${outcome}, current ${current}, marker ${marker}, quarantined ${quarantined}`,
          );
      }
      expect(broken, JSON.stringify(outcomes)).toEqual([]);
      // Signals before the switch end with nothing done; after it, with a rollback.
      expect(outcomes['rolled-back (interrupted)'] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
      expect(outcomes['refused E_INTERRUPTED'] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0);
    });
  },
);

/**
 * A direct activation killed after its switch, then the daemon starts (the production
 * `ManagedSession`): its start resolves the marker before it converges anything. A sidecar
 * daemon judges the agent; a self-hosted one is the candidate itself, so its rollback is a
 * scheduled restart through the service manager.
 */
describe('the daemon start resolves an interrupted direct activation', () => {
  const killedAfterSwitch: TreeSpec = {
    ...MANAGED,
    [LAYOUT.current]: { symlink: 'aks-flex-node-green' },
    [LAYOUT.lastGood]: { symlink: 'aks-flex-node-blue' },
    [LAYOUT.green]: exe(agentScript('2.0.0')),
    [LAYOUT.activation]: {
      file: JSON.stringify({
        kind: 'AgentDirectActivation',
        schemaVersion: 1,
        previous: 'blue',
        candidate: 'green',
        candidateDigest: digestOf(agentScript('2.0.0')),
        candidateVersion: '2.0.0',
        serviceActive: true,
      }),
      mode: 0o600,
    },
  };

  it.each([
    [
      'sidecar, the candidate crashes after start: rolled back, quarantined',
      SIDECAR_CONFIG,
      'crash-after-start',
      'aks-flex-node-blue',
      0,
    ],
    ['sidecar, the candidate is healthy: committed', SIDECAR_CONFIG, 'healthy', 'aks-flex-node-green', 0],
    ['self-hosted, the candidate is healthy: committed', CONFIG, 'healthy', 'aks-flex-node-green', 0],
    [
      'self-hosted, the candidate fails: rolled back by a scheduled restart, quarantined',
      CONFIG,
      'crash-after-start',
      'aks-flex-node-blue',
      1,
    ],
  ] as const)('%s', async (_label, config, behaviour, expectedCurrent, scheduledRestarts) => {
    const candidate = digestOf(agentScript('2.0.0'));
    const host = await boot(
      {
        tree: { ...killedAfterSwitch, [CANDIDATE]: exe(agentScript('2.0.0')) },
        behaviour,
        run: (upgrader) => upgrader.migrate(),
      },
      null,
      config,
    );
    // The agent restarted (or the host rebooted) after the kill: it runs what current names.
    await host.services.restart();
    const session = host.upgrader.managed({ store: new MemoryOperationStore(), selfExecutable: LAYOUT.blue });
    if (!session.ok) throw new Error(session.failure.message);
    const started = await session.value.start();
    expect(started.ok).toBe(true);
    const snapshot = host.fs.snapshot();
    const stateText = new TextDecoder().decode((await host.fs.readFile(LAYOUT.state, 65536)) ?? new Uint8Array());
    const quarantine = stateText === '' ? [] : (JSON.parse(stateText) as { quarantine: string[] }).quarantine;
    expect({
      current: linkText(snapshot, LAYOUT.current),
      marker: snapshot[LAYOUT.activation] !== undefined,
      quarantined: quarantine.includes(candidate),
      scheduled: host.services.scheduledRestarts,
    }).toEqual({
      current: expectedCurrent,
      marker: false,
      quarantined: behaviour === 'crash-after-start',
      scheduled: scheduledRestarts,
    });
  });
});
