import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryHealthProbe } from '../../src/adapters/node/memory/memory-health-probe.js';
import { MemoryServiceManager, type AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { type UpgraderConfig } from '../../src/app/node/config/upgrader-config.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { probeFailed, type ProbeOutcome } from '../../src/domain/node/health/probe-target.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';
import {
  FLEX_SANDBOX_PATHS as P,
  sandboxUpgrader,
  scriptAgent as agent,
  digestOf,
  SOCKET_PROBE,
  stageCandidate,
  GATE_TEST_HEALTH,
  modelledServices,
} from '../support/sandbox-upgrader.js';

const HEALTH: UpgraderConfig['health'] = {
  ...GATE_TEST_HEALTH,
  watchMs: 0, // test/app/direct-watch.test.ts covers the window
};

/**
 * The direct path with `health.probe` over real files: the modelled unit runs each binary as
 * its behaviour says, and the modelled probe is answered by what runs (a `probe-fails` agent
 * answers 503), or by an injected fault. Time is virtual.
 */
describe('direct activation gated on a health probe', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let behaviours: Map<string, AgentBehaviour>;
  let services: MemoryServiceManager;
  let faults: ProbeOutcome[];
  /** Called before every probe attempt (a signal arriving during the probing). */
  let beforeAttempt: () => void;
  let probe: MemoryHealthProbe;
  const at = (path: string): string => join(scratch.root, path);

  const upgraderWith = (health: UpgraderConfig['health']): Upgrader => {
    const clock = new MemoryClock();
    services = modelledServices(at, behaviours, clock);
    const fault = (): ProbeOutcome | null => {
      beforeAttempt();
      return faults.shift() ?? null;
    };
    probe = new MemoryHealthProbe({ services: () => services, fault });
    return sandboxUpgrader(
      scratch.root,
      { agent: { ...FLEX_PROFILE.agent, allowScripts: true }, health },
      { serviceManager: services, healthProbe: probe, clock },
    );
  };
  const stage = (version: string, behaviour: AgentBehaviour = 'healthy'): string =>
    stageCandidate(at, behaviours, version, behaviour);
  const quarantine = (): string[] =>
    (JSON.parse(readFileSync(at(P.state), 'utf8')) as { quarantine: string[] }).quarantine;

  beforeEach(() => {
    scratch = makeScratch();
    behaviours = new Map();
    faults = [];
    beforeAttempt = () => undefined;
    writeExecutable(at(P.entry), agent('1.0.0'));
  });
  afterEach(() => scratch.cleanup());

  it('rolls back a stable candidate whose probe fails: E_UNHEALTHY, quarantined, last-good untouched and running', async () => {
    const upgrader = upgraderWith({ ...HEALTH, probe: SOCKET_PROBE });
    const result = await upgrader.activate({ candidatePath: stage('2.0.0', 'probe-fails') });
    expect(result).toMatchObject({
      ok: false,
      failure: { code: 'E_UNHEALTHY' },
      activation: { outcome: 'rolled-back', to: 'green', quarantined: true },
    });
    expect({ current: readlinkSync(at(P.current)), lastGood: readlinkSync(at(P.lastGood)) }).toEqual({
      current: 'aks-flex-node-blue',
      lastGood: 'aks-flex-node-blue',
    });
    expect(readFileSync(at(P.blue), 'utf8')).toBe(agent('1.0.0'));
    expect(quarantine()).toEqual([digestOf(agent('2.0.0'))]);
    expect(await services.mainExecutable()).toBe(at(P.blue));
  });

  it('activates a candidate that passes successThreshold probes in a row', async () => {
    const upgrader = upgraderWith({ ...HEALTH, probe: SOCKET_PROBE });
    const result = await upgrader.activate({ candidatePath: stage('2.0.0') });
    expect(result).toMatchObject({ ok: true, value: { outcome: 'activated', to: 'green' } });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-green');
    expect(probe.attempts.filter((outcome) => outcome.kind === 'succeeded')).toHaveLength(2);
  });

  it('absorbs failures below failureThreshold, and rolls back at it', async () => {
    const slow = probeFailed('timed-out', 'timed out after 1000 ms');
    const upgrader = upgraderWith({ ...HEALTH, probe: SOCKET_PROBE });
    faults = [slow, slow];
    expect(await upgrader.activate({ candidatePath: stage('2.0.0') })).toMatchObject({
      ok: true,
      value: { outcome: 'activated' },
    });
    faults = [slow, slow, slow];
    expect(await upgrader.activate({ candidatePath: stage('3.0.0') })).toMatchObject({
      ok: false,
      failure: { code: 'E_UNHEALTHY' },
      activation: { outcome: 'rolled-back' },
    });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-green');
  });

  it('rolls back when flapping answers never reach a threshold before health.timeoutMs', async () => {
    const upgrader = upgraderWith({ ...HEALTH, probe: SOCKET_PROBE });
    const flap = probeFailed('http-status', 'HTTP 503');
    faults = Array.from({ length: 40 }, (_, index) => (index % 2 === 0 ? flap : { kind: 'succeeded' as const }));
    expect(await upgrader.activate({ candidatePath: stage('2.0.0') })).toMatchObject({
      ok: false,
      failure: { code: 'E_UNHEALTHY' },
      activation: { outcome: 'rolled-back' },
    });
  });

  it('without health.probe, judges the process alone, as before (the probe is never asked)', async () => {
    const upgrader = upgraderWith(HEALTH);
    const result = await upgrader.activate({ candidatePath: stage('2.0.0', 'probe-fails') });
    expect(result).toMatchObject({ ok: true, value: { outcome: 'activated' } });
    expect(probe.attempts).toEqual([]);
  });

  it("judges the operator's rollback onto last-good by its process alone: a failing probe does not revert it", async () => {
    const upgrader = upgraderWith({ ...HEALTH, probe: SOCKET_PROBE });
    expect(await upgrader.activate({ candidatePath: stage('2.0.0') })).toMatchObject({ ok: true });
    faults = Array.from({ length: 100 }, () => probeFailed('connection-failed', 'connection refused'));
    const rolledBack = await upgrader.rollback();
    expect(rolledBack).toMatchObject({ ok: true, value: { outcome: 'rolled-back', to: 'blue' } });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-blue');
  });

  it('a signal during the probing rolls back without quarantining the candidate (E_INTERRUPTED)', async () => {
    const upgrader = upgraderWith({ ...HEALTH, probe: SOCKET_PROBE });
    const controller = new AbortController();
    beforeAttempt = () => controller.abort();
    const result = await upgrader.activate({ candidatePath: stage('2.0.0'), signal: controller.signal });
    expect(result).toMatchObject({
      ok: false,
      failure: { code: 'E_INTERRUPTED' },
      activation: { outcome: 'rolled-back', quarantined: false },
    });
    expect(readlinkSync(at(P.current))).toBe('aks-flex-node-blue');
  });
});
