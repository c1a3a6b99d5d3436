import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import type { PortOverrides } from '../../src/app/node/composition/port-overrides.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';
import { runCliInMemory } from '../support/run-cli.js';
import {
  FLEX_SANDBOX_PATHS as P,
  scriptAgent as agent,
  stageCandidate,
  modelledPorts,
} from '../support/sandbox-upgrader.js';
import { screenAfter } from './terminal-screen.js';

/** A 3 s stability interval, a probe that must pass twice, then a 6 s watch window. */
const CONFIG = {
  service: { manager: 'none' },
  container: { manager: 'none' },
  agent: { allowScripts: true },
  health: {
    timeoutMs: 30_000,
    stableMs: 3_000,
    pollMs: 250,
    watchMs: 6_000,
    probe: { http: { socket: '/run/aks-flex-node/health.sock', path: '/healthz' }, successThreshold: 2 },
  },
};

/**
 * `activate` (and `rollback`) on a terminal names the health wait on one transient line of stderr — the
 * stability, the probe, the watch window, or the previous binary's stability after a rollback —
 * and erases it before the result is printed; never with `--json`, never off a terminal. The
 * modelled unit and probe run on virtual time, so the 9 s of waiting take none.
 */
describe('activate shows the health wait on a terminal', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let behaviours: Map<string, AgentBehaviour>;
  const at = (path: string): string => join(scratch.root, path);

  const overrides = (): PortOverrides => modelledPorts(at, behaviours);
  const stage = (version: string, behaviour: AgentBehaviour = 'healthy'): string =>
    stageCandidate(at, behaviours, version, behaviour);

  beforeEach(() => {
    scratch = makeScratch();
    behaviours = new Map();
    writeExecutable(at(P.entry), agent('1.0.0'));
    mkdirSync(at('etc/aks-flex-node'), { recursive: true });
    writeFileSync(at('etc/aks-flex-node/agent-upgrade.json'), JSON.stringify(CONFIG));
  });
  afterEach(() => scratch.cleanup());

  it('names the stability, the probe and the watch window, and erases the line before the result', async () => {
    const run = await runCliInMemory(['activate', stage('2.0.0'), '--root', scratch.root], {
      tty: true,
      overrides: overrides(),
    });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toContain('\rWaiting for aks-flex-node to be healthy: stable ');
    expect(run.stderr).toMatch(/stable \d\.\d\/3\.0 s/);
    expect(run.stderr).toContain('\rWaiting for aks-flex-node to be healthy: probe 0/2 successes');
    expect(run.stderr).toContain('\rWatching aks-flex-node through its watch window: 0:00/0:06');
    // Erased: nothing of it is left on the screen, and the result went to stdout.
    expect(screenAfter(run.stderr, 80).filter((line) => line !== '')).toEqual([]);
    expect(run.stderr.endsWith('\r\u001b[K')).toBe(true);
    expect(run.stdout).not.toContain('Waiting');
    expect(run.stdout).toMatch(/green/);
  });

  it('after a candidate that crashes on start, names the rollback’s wait, and erases it before the error', async () => {
    const run = await runCliInMemory(['activate', stage('2.0.0', 'crash-on-start'), '--root', scratch.root], {
      tty: true,
      overrides: overrides(),
    });
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toContain('\rRolling back: waiting for aks-flex-node to be healthy: stable ');
    const screen = screenAfter(run.stderr, 80).filter((line) => line !== '');
    expect(screen.join('\n')).not.toMatch(/Waiting|waiting for aks-flex-node/);
    expect(screen[0]).toMatch(/^agent-upgrade: E_UNHEALTHY: /);
  });

  it('rollback names last-good’s health wait, and erases it before the result', async () => {
    const ports = overrides();
    expect(
      (await runCliInMemory(['activate', stage('2.0.0'), '--root', scratch.root], { overrides: ports })).exitCode,
    ).toBe(0);
    const run = await runCliInMemory(['rollback', '--root', scratch.root], { tty: true, overrides: ports });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/\rRolling back: waiting for aks-flex-node to be healthy: stable \d\.\d\/3\.0 s/);
    expect(screenAfter(run.stderr, 80).filter((line) => line !== '')).toEqual([]);
    expect(run.stdout).toMatch(/^Rolled back: current /);
  });

  it.each([
    ['with --json on a terminal', ['--json'], true],
    ['off a terminal', [], false],
  ])('shows nothing %s', async (_name, flags, tty) => {
    const run = await runCliInMemory(['activate', stage('2.0.0'), '--root', scratch.root, ...flags], {
      tty,
      overrides: overrides(),
    });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
    expect(`${run.stdout}`).not.toMatch(/Waiting|Watching/);
  });
});
