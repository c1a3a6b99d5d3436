import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, SystemdWorld } from '../support/systemd/systemd-host.js';

/** `agent-upgrade demo --systemd` inside a private systemd: the same story with a real unit. */
describe('agent-upgrade demo --systemd', () => {
  let world: SystemdWorld;

  beforeAll(async () => {
    world = await SystemdWorld.create();
  }, 60_000);
  afterAll(async () => world?.close());

  it('upgrades to a signed v2, refuses a swapped v2.1, rolls back v3 and v3.1 (in its watch window) under systemd, then removes its units', () => {
    const run = world.systemd.run(CLI, ['demo', '--systemd', '--json'], { timeoutMs: 120_000 });
    expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' });
    const { demo } = JSON.parse(run.stdout) as {
      demo: { sandbox: string; steps: { phase: string; running: string | null }[] };
    };
    expect(demo.steps.map((step) => [step.phase, step.running])).toEqual([
      ['legacy install', null],
      ['migrate', null],
      ['start', 'blue (v1.0.0)'],
      ['install v2.0.0', 'green (v2.0.0)'],
      ['install v2.1.0', 'green (v2.0.0)'],
      ['install v3.0.0', 'green (v2.0.0)'],
      ['install v3.1.0', 'green (v2.0.0)'],
    ]);
    expect(existsSync(demo.sandbox)).toBe(false);
    const units = world.systemd
      .run('ls', ['/run/systemd/system'])
      .stdout.split('\n')
      .filter((name) => name.startsWith('agent-upgrade-demo-'));
    expect(units).toEqual([]);
    expect(
      world.systemd.run('systemctl', ['list-units', '--all', '--no-legend', 'agent-upgrade-demo-*']).stdout.trim(),
    ).toBe('');
    // And nothing reached the host's own /run (the namespace has a private one).
    const hostUnits = existsSync('/run/systemd/system')
      ? readdirSync('/run/systemd/system').filter((name) => name.startsWith('agent-upgrade-demo-'))
      : [];
    expect(hostUnits).toEqual([]);
  }, 150_000);
});
