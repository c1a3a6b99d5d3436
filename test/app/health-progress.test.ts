import { readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import type { UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import type { HealthProgress } from '../../src/app/node/health/health-progress.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';
import {
  FLEX_SANDBOX_PATHS as P,
  sandboxUpgrader,
  scriptAgent as agent,
  SOCKET_PROBE,
  stageCandidate,
  GATE_TEST_HEALTH,
  modelledPorts,
} from '../support/sandbox-upgrader.js';

const HEALTH: UpgraderConfig['health'] = {
  ...GATE_TEST_HEALTH,
  watchMs: 6_000,
  probe: SOCKET_PROBE,
};

/** The phases in the order they were first heard, each once: 'stable-candidate', 'probe', … */
const phasesOf = (heard: readonly HealthProgress[]): string[] =>
  heard
    .map((progress) => (progress.phase === 'stable' ? `stable-${progress.purpose}` : progress.phase))
    .filter((phase, index, all) => index === 0 || all[index - 1] !== phase);

/**
 * What the direct path tells `onHealthProgress` while it waits (virtual time, the modelled unit
 * and probe): figures for a display, never a verdict — the same activation with an observer that
 * throws ends exactly as without one.
 */
describe('health progress on the direct path', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let behaviours: Map<string, AgentBehaviour>;
  const at = (path: string): string => join(scratch.root, path);

  const upgrader = (health: UpgraderConfig['health'] = HEALTH): Upgrader => {
    const ports = modelledPorts(at, behaviours);
    return sandboxUpgrader(scratch.root, { agent: { ...FLEX_PROFILE.agent, allowScripts: true }, health }, ports);
  };
  const stage = (version: string, behaviour: AgentBehaviour = 'healthy'): string =>
    stageCandidate(at, behaviours, version, behaviour);

  beforeEach(() => {
    scratch = makeScratch();
    behaviours = new Map();
    writeExecutable(at(P.entry), agent('1.0.0'));
  });
  afterEach(() => scratch.cleanup());

  it('a healthy candidate: its stability up to health.stableMs, then the probe to its threshold, then the window to its end', async () => {
    const heard: HealthProgress[] = [];
    const result = await upgrader().activate({ candidatePath: stage('2.0.0'), onHealthProgress: (p) => heard.push(p) });
    expect(result).toMatchObject({ ok: true, value: { outcome: 'activated' } });
    expect(phasesOf(heard)).toEqual(['stable-candidate', 'probe', 'watch']);

    const stableMs = heard.flatMap((p) => (p.phase === 'stable' ? [p.stableMs] : []));
    expect(stableMs).toEqual([...stableMs].sort((a, b) => a - b));
    expect(stableMs.at(-1)).toBe(3_000);
    expect(heard.find((p) => p.phase === 'stable')).toMatchObject({ neededMs: 3_000 });

    const probes = heard.flatMap((p) => (p.phase === 'probe' ? [`${p.successes}/${p.successesNeeded}`] : []));
    expect(probes).toEqual(['0/2', '1/2', '2/2']);

    const watched = heard.flatMap((p) => (p.phase === 'watch' ? [p.watchedMs] : []));
    expect(watched).toEqual([...watched].sort((a, b) => a - b));
    expect(watched[0]).toBe(0);
    expect(watched.at(-1)).toBeGreaterThanOrEqual(5_000);
    expect(watched.every((ms) => ms <= 6_000)).toBe(true);
  });

  it('a candidate that crashes on start: the rollback’s wait for the previous binary is heard as such', async () => {
    const heard: HealthProgress[] = [];
    const result = await upgrader().activate({
      candidatePath: stage('2.0.0', 'crash-on-start'),
      onHealthProgress: (p) => heard.push(p),
    });
    expect(result).toMatchObject({ ok: false, activation: { outcome: 'rolled-back' } });
    // The manager gave up at its first poll: nothing to show for the candidate; then last-good.
    expect(phasesOf(heard)).toEqual(['stable-known-good']);
    expect(heard.at(-1)).toMatchObject({ phase: 'stable', stableMs: 3_000 });
  });

  it.each([
    ['healthy', 'activated', 'aks-flex-node-green'],
    ['crash-after-20s', 'activated', 'aks-flex-node-green'],
    ['probe-fails', 'rolled-back', 'aks-flex-node-blue'],
    ['crash-after-1s', 'rolled-back', 'aks-flex-node-blue'],
  ] as const)('a %s candidate ends the same with an observer that throws', async (behaviour, outcome, current) => {
    const throwing = (): void => {
      throw new Error('the display broke');
    };
    const result = await upgrader({ ...HEALTH, watchMs: 0 }).activate({
      candidatePath: stage('2.0.0', behaviour),
      onHealthProgress: throwing,
    });
    const report = result.ok ? result.value : result.activation;
    expect(report?.outcome).toBe(outcome);
    expect(readlinkSync(at(P.current))).toBe(current);
  });
});
