import { it } from 'vitest';
import { fleetOf, fleetSpec } from './fleet-scenarios.js';
import { NO_FAULTS, runFleet } from './fleet-run.js';

it('debug', async () => {
  const counts: Record<string, number> = {};
  let planMs = 0;
  const metrics = {
    rolloutObserved: () => undefined,
    rolloutForgotten: () => undefined,
    halted: () => undefined,
    reconciled: (_d: number, outcome: string) => {
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    },
    apiRequest: (s: { verb: string; resource: string }) => {
      const k = `${s.verb} ${s.resource}`;
      counts[k] = (counts[k] ?? 0) + 1;
    },
    leading: () => undefined,
  };
  const r = await runFleet({
    seed: 1,
    machines: fleetOf(Number(process.env['N'] ?? 3000), 1),
    failures: 'none',
    rollouts: [{ name: 'fleet', spec: fleetSpec() }],
    faults: NO_FAULTS,
    limitMs: 86_400_000,
    metrics,
  });
  console.log(JSON.stringify(counts), planMs, r.realMs, r.statuses.get('fleet')?.['phase']);
  await r.world.close();
}, 900_000);
