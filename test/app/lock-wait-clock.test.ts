import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { MemoryHostLock } from '../../src/adapters/node/memory/memory-host-lock.js';
import { withHostLock } from '../../src/app/node/lock/with-host-lock.js';

const DAY_MS = 86_400_000;
const WAIT_MS = 10_000;

/** The memory clock, with its wall clock stepped by `deltaMs` at every sleep (NTP gone wild). */
class WallSteppingClock extends MemoryClock {
  constructor(private readonly deltaMs: number) {
    super();
  }

  override async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    this.stepWall(this.deltaMs);
    await super.sleep(ms, signal);
  }
}

/**
 * A bounded wait for a busy host lock (recover waits twice the health timeout) lasts what it
 * says on the monotonic clock, whatever the wall clock does meanwhile
 * (docs/protocol.md#the-two-clocks): a step forward must not cut it short, a step back must not
 * make it endless.
 */
describe('waiting for a busy host lock across wall-clock steps', () => {
  it.each([0, DAY_MS, -DAY_MS])(
    'with the wall clock stepped by %i ms at every poll, it waits exactly waitMs',
    async (deltaMs) => {
      const lock = new MemoryHostLock();
      expect((await lock.tryAcquire({ pid: 7, command: 'agent-upgrade install' })).kind).toBe('acquired');
      const clock = new WallSteppingClock(deltaMs);
      const startedMs = clock.monotonicMs();
      const run = await withHostLock(lock, () => Promise.resolve('ran'), { clock, waitMs: WAIT_MS });
      expect(run).toMatchObject({ kind: 'busy', holder: { pid: 7 } });
      expect(clock.monotonicMs() - startedMs).toBe(WAIT_MS);
    },
  );
});
