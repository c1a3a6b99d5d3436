/**
 * The clock rule (docs/protocol.md#the-two-clocks): no verdict depends on the wall clock. NTP, a
 * VM resume or `date -s` may step it a day either way at any moment of an activation; every
 * duration the upgrader measures (the health wait's stability and deadline, lock waits, retries)
 * runs on the monotonic clock, so the outcome, where current ends, and how long the wait took
 * stay exactly those of the run without a step.
 *
 * Every point is enumerated: a run counts its clock readings, and a replay steps the wall clock
 * at each one, forward and back, on the direct path (`install`) and the managed path in sidecar
 * and self-hosted mode (the restarted daemon's startup gate), for a healthy candidate, one that
 * dies at once and one that dies after a second (the case a step forward turned into a committed
 * crasher while the wait read the wall clock).
 */
import { describe, expect, it } from 'vitest';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import type { AgentBehaviour } from '../../src/adapters/node/memory/memory-service-manager.js';
import { resolveInSnapshot } from './host-invariants.js';
import { agentScript, CONFIG, digestOf, LAYOUT, ManagedWorld, SIDECAR_CONFIG } from './managed-world.js';

const DAY_MS = 86_400_000;
const STEPS_MS = [DAY_MS, -DAY_MS] as const;
const BEHAVIOURS = ['healthy', 'crash-after-start', 'crash-after-1s'] as const satisfies readonly AgentBehaviour[];

interface WallStep {
  readonly atReading: number;
  readonly deltaMs: number;
}

/** The memory clock, whose wall clock steps by `deltaMs` just before its `atReading`-th reading. */
class SteppingClock extends MemoryClock {
  readings = 0;

  constructor(private readonly step: WallStep | null) {
    super();
  }

  override nowMs(): number {
    this.read();
    return super.nowMs();
  }

  override monotonicMs(): number {
    this.read();
    return super.monotonicMs();
  }

  private read(): void {
    this.readings += 1;
    if (this.step !== null && this.readings === this.step.atReading) this.stepWall(this.step.deltaMs);
  }
}

interface Verdict {
  readonly outcome: string;
  readonly current: string | null;
  readonly lastGood: string | null;
  /** Time that really passed: a wait that ran longer or shorter shows here. */
  readonly elapsedMs: number;
}

type Path = (world: ManagedWorld, clock: SteppingClock) => Promise<string>;

const direct: Path = async (world, clock) => {
  const release = world.publishRelease('2.0.0');
  const result = await world.process(CONFIG, { clock }).install({ url: release.url, sha256: release.sha256 });
  return result.ok ? result.value.outcome : `refused ${result.failure.code}`;
};

const sidecar: Path = async (world) => {
  const release = world.publishRelease('2.0.0');
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name: 'upgrade', parameters });
  const daemon = world.daemon(null, SIDECAR_CONFIG);
  await daemon.start();
  await daemon.handler.handle({ operation, phase: null, parameters });
  // The sidecar's gate after the switch: the restart, the health wait, and the publication.
  await daemon.start();
  const status = world.store.get('upgrade');
  return `${status?.phase ?? 'none'} ${status?.reason ?? ''}`;
};

const selfHosted: Path = async (world) => {
  const release = world.publishRelease('2.0.0');
  const parameters = { downloadURL: release.url, sha256: release.sha256 };
  const operation = world.store.create({ name: 'upgrade', parameters });
  await world.daemon().handler.handle({ operation, phase: null, parameters });
  // The hand-over: the unit restarts the daemon from the candidate, whose gate judges it.
  await world.services.performScheduledRestarts();
  await world.daemon(await world.services.mainExecutable()).start();
  const status = world.store.get('upgrade');
  return `${status?.phase ?? 'none'} ${status?.reason ?? ''}`;
};

async function run(path: Path, behaviour: AgentBehaviour, step: WallStep | null) {
  const clock = new SteppingClock(step);
  const world = new ManagedWorld('1.0.0', clock);
  world.behaviours.set(digestOf(agentScript('2.0.0')), behaviour);
  await world.services.restart();
  const startedMs = clock.monotonicMs();
  const outcome = await path(world, clock);
  const snapshot = world.fs.snapshot();
  const verdict: Verdict = {
    outcome,
    current: resolveInSnapshot(snapshot, LAYOUT.current),
    lastGood: resolveInSnapshot(snapshot, LAYOUT.lastGood),
    elapsedMs: clock.monotonicMs() - startedMs,
  };
  return { verdict, readings: clock.readings };
}

// A crashing self-hosted candidate is the daemon that would judge it: its recovery goes through
// the unit's OnFailure hook (managed-path.test.ts), whose waits the sidecar's gate shares.
describe.each([
  ['the direct path', direct, BEHAVIOURS],
  ['the managed path (sidecar)', sidecar, BEHAVIOURS],
  ['the managed path (self-hosted)', selfHosted, ['healthy']],
] as const)('a wall-clock step at any point of %s', (_name, path, behaviours) => {
  it.each(behaviours)('changes no verdict for a %s candidate', async (behaviour) => {
    const base = await run(path, behaviour, null);
    const healthy = behaviour === 'healthy';
    expect(base.verdict.current).toBe(healthy ? LAYOUT.green : LAYOUT.blue);
    // The previous binary stays last-good either way (the fallback of a later failure).
    expect(base.verdict.lastGood).toBe(LAYOUT.blue);
    // The model's stability interval is 3 s: a healthy candidate is accepted no sooner.
    if (healthy) expect(base.verdict.elapsedMs).toBeGreaterThanOrEqual(CONFIG.health.stableMs);
    let stepped = 0;
    for (const deltaMs of STEPS_MS) {
      for (let atReading = 1; atReading <= base.readings; atReading += 1) {
        const replay = await run(path, behaviour, { atReading, deltaMs });
        expect(replay.verdict, `wall ${deltaMs > 0 ? '+' : '-'}1 day at reading ${atReading}`).toEqual(base.verdict);
        stepped += 1;
      }
    }
    expect(stepped).toBe(2 * base.readings);
  });
});
