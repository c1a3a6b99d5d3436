/**
 * Faults the host throws at a command: a filesystem fault at every mutating op (the exit code
 * tells whether the host changed), an unusable lock path, a supervisor killed under its agent.
 */
import { describe, expect, it } from 'vitest';
import { LOCK_PATH_FAULTS } from '../../src/adapters/node/memory/memory-host-lock.js';
import type { FaultCode } from '../../src/adapters/node/memory/memory-ops.js';
import type { Upgrader } from '../../src/app/node/upgrader.js';
import { boot, CANDIDATE, endedWithoutClaim, MANAGED, material, SCENARIOS } from './exit-truth-world.js';

const FAULTS: readonly FaultCode[] = ['ENOSPC', 'EIO', 'EROFS'];

describe.each(Object.entries(SCENARIOS))(
  '%s: a fault at every op, the exit code tells the truth',
  (_name, scenario) => {
    it.each(FAULTS)('%s at each op', async (code) => {
      const free = await boot(scenario);
      const before = free.fs.opCount;
      expect(endedWithoutClaim(await scenario.run(free.upgrader))).toBe(true);
      const opCount = free.fs.opCount - before;
      expect(opCount).toBeGreaterThan(2);
      const lies: string[] = [];
      const outcomes = { ok: 0, unchanged: 0, changed: 0 };
      for (let at = 0; at < opCount; at += 1) {
        const host = await boot(scenario);
        const start = material(host.fs.snapshot());
        host.fs.failAt(host.fs.opCount + at, code);
        const result = await scenario.run(host.upgrader);
        const changed = material(host.fs.snapshot()) !== start;
        if (result.ok || endedWithoutClaim(result)) {
          outcomes.ok += 1;
          continue;
        }
        const claimed = result.failure.hostChanged === true;
        outcomes[claimed ? 'changed' : 'unchanged'] += 1;
        if (claimed !== changed)
          lies.push(
            `op ${at} (${host.fs.journal
              .slice(-2)
              .map((entry) => `${entry.op} ${entry.path}`)
              .join(
                ' | ',
              )}): ${result.failure.code}, claims ${claimed ? 'changed' : 'unchanged'}, host ${changed ? 'changed' : 'unchanged'}`,
          );
      }
      expect(lies, JSON.stringify(outcomes)).toEqual([]);
    });
  },
);

/** A FIFO, a symlink or another non-regular entry at the lock path: every command refuses, unchanged. */
describe.each(Object.entries(SCENARIOS))('%s with an unusable lock path', (_name, scenario) => {
  it.each(LOCK_PATH_FAULTS)('%s: E_IO, nothing changed', async (fault) => {
    const host = await boot(scenario, fault);
    const start = material(host.fs.snapshot());
    const result = await scenario.run(host.upgrader);
    expect(result.ok ? 'ok' : { code: result.failure.code, hostChanged: result.failure.hostChanged === true }).toEqual({
      code: 'E_IO',
      hostChanged: false,
    });
    expect(material(host.fs.snapshot())).toBe(start);
  });
});

/**
 * The supervisor SIGKILLed under its running agent: commands that would restart or judge the
 * agent refuse (`E_SERVICE`, nothing changed) rather than start a second one beside the orphan;
 * a new supervisor stops the orphan and exactly one agent runs again.
 */
describe('a supervisor killed under its agent', () => {
  it.each([
    ['activate', (upgrader: Upgrader) => upgrader.activate({ candidatePath: CANDIDATE })],
    ['rollback', (upgrader: Upgrader) => upgrader.rollback()],
  ] as const)(
    '%s refuses with E_SERVICE and changes nothing; the next supervisor runs one agent',
    async (_name, run) => {
      const host = await boot({ tree: MANAGED, behaviour: 'healthy', run });
      host.services.killSupervisor();
      const start = material(host.fs.snapshot());
      const result = await run(host.upgrader);
      expect(
        result.ok ? 'ok' : { code: result.failure.code, hostChanged: result.failure.hostChanged === true },
      ).toEqual({ code: 'E_SERVICE', hostChanged: false });
      expect(material(host.fs.snapshot())).toBe(start);
      expect(host.services.runningAgents).toBe(1);
      await host.services.startSupervisor();
      expect({ agents: host.services.runningAgents, activity: await host.services.activity() }).toEqual({
        agents: 1,
        activity: 'active',
      });
    },
  );
});
