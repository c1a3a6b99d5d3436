/** One example per gate, in the order the planner checks them, and the write-ahead rule. */
import { describe, expect, it } from 'vitest';
import { planRollout } from '../../../src/domain/fleet/decide/plan-rollout.js';
import { ANNOTATION_APPROVE_WAVE, LABEL_ARCH, LABEL_ZONE } from '../../../src/domain/fleet/spec/rollout-vocabulary.js';
import { makeRelease } from './fixtures.js';
import {
  creates,
  eventReasons,
  exampleCluster,
  finish,
  later,
  live,
  operationsOf,
  reconcile,
  strategy,
} from './example-cluster.js';

const MINUTE = 60_000;
const twoWaves = (rest: Record<string, unknown> = {}, canary: Record<string, unknown> = {}) =>
  strategy({
    waves: [
      { name: 'canary', count: 2, maxInFlight: 2, ...canary },
      { name: 'rest', percent: 100, maxInFlight: 4, ...rest },
    ],
  });

describe('Preview', () => {
  it('plans without creating: wave sizes, exclusions and diverse canaries', () => {
    const world = exampleCluster(12, { state: 'Preview' });
    const plan = reconcile(world);
    expect(creates(plan)).toEqual([]);
    expect(plan.status.phase).toBe('Preview');
    expect(plan.status.waves.map((wave) => [wave.name, wave.size])).toEqual([
      ['canary', 2],
      ['early', 1],
      ['rest', 9],
    ]);
    const canaries = plan.status.preview?.canaries ?? [];
    const labels = canaries.map((name) => world.nodes.get(name)?.labels ?? {});
    expect(new Set(labels.map((l) => l[LABEL_ARCH]))).toEqual(new Set(['amd64', 'arm64']));
    expect(new Set(labels.map((l) => l[LABEL_ZONE])).size).toBe(2);
    expect(plan.status.targetSnapshot).toBeUndefined();
    world.spec = { ...world.spec, state: 'Run' };
    later(world);
    const run = reconcile(world);
    expect(creates(run).map((op) => op.spec.machineRef)).toEqual(canaries);
    expect(run.status.targetSnapshot?.count).toBe(12);
  });
});

describe('Pause and Abort', () => {
  it('Pause stops new operations and leaves running ones alone; Run continues', () => {
    const world = exampleCluster(8);
    reconcile(world);
    world.spec = { ...world.spec, state: 'Pause' };
    later(world);
    const paused = reconcile(world);
    expect(paused.status.phase).toBe('Paused');
    expect(eventReasons(paused)).toEqual(['RolloutPaused']);
    for (const op of operationsOf(world)) finish(world, op, 'Succeeded');
    later(world);
    expect(creates(reconcile(world))).toEqual([]);
    world.spec = { ...world.spec, state: 'Run' };
    later(world);
    expect(creates(reconcile(world)).length).toBeGreaterThan(0);
  });

  it('Abort is final: nothing new, even when Run is set again', () => {
    const world = exampleCluster(8);
    reconcile(world);
    world.spec = { ...world.spec, state: 'Abort' };
    later(world);
    const aborted = reconcile(world);
    expect(aborted.status.phase).toBe('Aborted');
    expect(live(world)).toHaveLength(2);
    world.spec = { ...world.spec, state: 'Run' };
    later(world);
    const again = reconcile(world);
    expect(again.status.phase).toBe('Aborted');
    expect(creates(again)).toEqual([]);
  });
});

describe('halts', () => {
  it('halts on a quarantined release without writing a quarantine or rolling back', () => {
    const world = exampleCluster(8, twoWaves());
    const release = world.releases.get('agent-1.4.2')!;
    world.releases.set(release.name, {
      ...release,
      spec: { ...(release.spec as object), quarantine: { quarantined: true, reason: 'CVE' } },
    });
    const plan = reconcile(world);
    expect(plan.status.phase).toBe('Halted');
    expect(plan.status.halt).toMatchObject({
      reason: 'ReleaseQuarantined',
      message: 'the release is quarantined: CVE',
    });
    expect(
      plan.actions.some((action) => action.kind === 'QuarantineRelease' || action.kind === 'CreateOperation'),
    ).toBe(false);
    expect(eventReasons(plan)).toEqual(['RolloutHalted', 'ReleaseUnavailable']);
    expect(plan.status.rollback).toBeUndefined();
  });

  it('records the halt before quarantining, resumes only with the halt id, then halts anew on new evidence', () => {
    const world = exampleCluster(12, twoWaves());
    reconcile(world);
    const [first, second] = operationsOf(world, 'canary');
    finish(world, first!, 'DaemonFailed');
    later(world);
    const halting = reconcile(world);
    expect(halting.actions.map((action) => action.kind)).toEqual([
      'UpdateRolloutStatus',
      'QuarantineRelease',
      'RecordEvent',
      'RecordEvent',
      'RecordEvent',
      'RecordEvent',
    ]);
    expect(eventReasons(halting)).toEqual([
      'FailureBudgetExceeded',
      'RolloutHalted',
      'ReleaseQuarantined',
      'ReleaseQuarantined',
    ]);
    const halt = halting.status.halt!;
    expect(halt).toMatchObject({ reason: 'FailureBudgetExceeded', wave: 'canary', quarantine: 'Requested' });
    expect(halt.id).toMatch(/^canary-[0-9a-f]{8}$/);
    finish(world, second!, 'Succeeded');
    later(world);
    expect(reconcile(world).status.halt?.quarantine).toBe('Applied');

    world.spec = { ...world.spec, resumeFromHalt: 'canary-00000000' };
    later(world);
    expect(reconcile(world).status.phase).toBe('Halted');
    // Lifting the quarantine is a separate, explicit step; then the halt id resumes.
    const release = world.releases.get('agent-1.4.2')!;
    world.releases.set(release.name, {
      ...release,
      spec: { ...(release.spec as object), quarantine: { quarantined: false, reason: '' } },
    });
    world.spec = { ...world.spec, resumeFromHalt: halt.id };
    later(world);
    const resumed = reconcile(world);
    expect(eventReasons(resumed)).toContain('RolloutResumed');
    expect(resumed.status.waves[0]?.accepted).toEqual({ failures: 1, invalidParameters: 0, timedOut: 0 });
    expect(creates(resumed).length).toBeGreaterThan(0);
    finish(world, operationsOf(world, 'rest')[0]!, 'DaemonFailed');
    later(world);
    const again = reconcile(world);
    expect(again.status.halt?.wave).toBe('rest');
    expect(again.status.halt?.id).not.toBe(halt.id);
  });

  it('holds new operations to maxUnavailable and halts when failures that left machines unusable reach it', () => {
    const world = exampleCluster(
      8,
      strategy({ maxUnavailable: 2, waves: [{ name: 'all', percent: 100, maxInFlight: 8, failureBudget: 8 }] }),
    );
    expect(creates(reconcile(world))).toHaveLength(2);
    const [a, b] = operationsOf(world);
    finish(world, a!, 'Crashed');
    finish(world, b!, 'DaemonFailed'); // back on last-good: usable
    later(world);
    expect(creates(reconcile(world))).toHaveLength(1);
    finish(
      world,
      operationsOf(world).find((op) => op.phase === null)!,
      'Crashed',
    );
    later(world);
    const plan = reconcile(world);
    expect(plan.status.halt).toMatchObject({ reason: 'MaxUnavailableReached' });
    expect(creates(plan)).toEqual([]);
  });
});

describe('window, approval and bake', () => {
  it('starts nothing outside the maintenance window, in its time zone', () => {
    // Monday 12:00 UTC is 13:00 in Berlin: after the 09:00–11:00 window.
    const schedule = { windows: [{ days: ['Mon'], start: '09:00', duration: '2h', timeZone: 'Europe/Berlin' }] };
    const world = exampleCluster(8, { schedule });
    const closed = reconcile(world);
    expect(closed.status.phase).toBe('WaitingForWindow');
    expect(creates(closed)).toEqual([]);
    expect(closed.requeueAfterMs).toBe(Date.UTC(2025, 0, 13, 8) - world.nowMs); // when it opens: 09:00 in Berlin
    world.nowMs -= 3.5 * 60 * MINUTE; // 08:30 UTC = 09:30 in Berlin
    expect(creates(reconcile(world))).toHaveLength(2);
  });

  it('holds the next wave after a Manual wave until the annotation approves it', () => {
    const world = exampleCluster(8, twoWaves({}, { gate: 'Manual', bake: '10m' }));
    reconcile(world);
    for (const op of operationsOf(world)) finish(world, op, 'Succeeded');
    later(world);
    const waiting = reconcile(world);
    expect(waiting.status).toMatchObject({ phase: 'AwaitingApproval', currentWave: 'canary' });
    expect(creates(waiting)).toEqual([]);
    // Approved while it still bakes: the bake still holds the next wave.
    world.annotations[ANNOTATION_APPROVE_WAVE] = 'canary';
    later(world);
    expect(reconcile(world).status.phase).toBe('Baking');
    later(world, 10 * MINUTE);
    const approved = reconcile(world);
    expect(eventReasons(approved)).toContain('WaveStarted');
    expect(creates(approved)).toHaveLength(4);
  });

  it('bakes a completed wave before the next one starts', () => {
    const world = exampleCluster(8, twoWaves({}, { bake: '10m' }));
    reconcile(world);
    for (const op of operationsOf(world)) finish(world, op, 'Succeeded');
    later(world);
    const baking = reconcile(world);
    expect(baking.status.phase).toBe('Baking');
    expect(baking.status.waves[0]).toMatchObject({ phase: 'Baking', bakeUntil: '2025-01-06T12:10:10Z' });
    expect(baking.requeueAfterMs).toBe(10 * MINUTE);
    later(world, 5 * MINUTE);
    expect(creates(reconcile(world))).toEqual([]);
    later(world, 5 * MINUTE);
    expect(creates(reconcile(world))).toHaveLength(4);
  });
});

describe('write-ahead and level-based planning', () => {
  it('announces the creates and advances the cursor in one guarded update before creating', () => {
    const world = exampleCluster(8);
    const plan = planRollout(world.snapshot(), world.nowMs);
    const [update, ...rest] = plan.actions;
    const names = creates(plan).map((op) => op.metadata.name);
    expect(update).toMatchObject({ kind: 'UpdateRolloutStatus', resourceVersion: '1' });
    expect(plan.status.waves[0]).toMatchObject({ cursor: 2, pendingCreates: names });
    expect(rest.slice(0, 2).map((action) => action.kind)).toEqual(['CreateOperation', 'CreateOperation']);
    // A crash right after the update: the next controller creates exactly the announced ones.
    world.apply(plan, 1);
    const replan = planRollout(world.snapshot(), world.nowMs);
    expect(creates(replan).map((op) => op.metadata.name)).toEqual(names);
    expect(replan.actions[0]).toMatchObject({ kind: 'UpdateRolloutStatus', resourceVersion: '2' });
    // A plan from a stale cache is refused at its update, so none of its creates happen.
    expect(world.apply(plan)).toBe(false);
    expect(world.operations.size).toBe(0);
  });

  it('writes nothing when nothing changed', () => {
    const world = exampleCluster(8);
    reconcile(world);
    later(world);
    reconcile(world);
    expect(planRollout(world.snapshot(), world.nowMs).actions).toEqual([]);
  });

  it('names children after the rollout and the machine, with labels, an owner and machineRef', () => {
    const world = exampleCluster(8);
    const [op] = creates(reconcile(world));
    expect(op?.metadata.name).toMatch(/^fleet-[0-9a-f]{12}$/);
    expect(op?.metadata.labels).toEqual({
      'agent-upgrade.dev/rollout': 'fleet',
      'agent-upgrade.dev/wave': 'canary',
      'agent-upgrade.dev/machine': op?.spec.machineRef,
      'agent-upgrade.dev/purpose': 'upgrade',
    });
    expect(op?.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'agent-upgrade.dev/v1alpha1',
        kind: 'AgentRollout',
        name: 'fleet',
        uid: 'uid-fleet',
        controller: true,
      },
    ]);
    expect(op?.spec).not.toHaveProperty('machineSelector');
    expect(op?.spec).not.toHaveProperty('ttlSecondsAfterFinished');
  });

  it('never dispatches a release re-created under the same name after the rollout started', () => {
    const world = exampleCluster(8);
    reconcile(world);
    world.releases.set('agent-1.4.2', makeRelease('agent-1.4.2', '1.4.2', 'uid-other'));
    for (const op of operationsOf(world)) finish(world, op, 'Succeeded');
    later(world);
    const plan = reconcile(world);
    expect(creates(plan)).toEqual([]);
    expect(plan.status.conditions.find((c) => c.type === 'ReleaseReady')).toMatchObject({
      status: 'False',
      reason: 'ReleaseChanged',
    });
    expect(eventReasons(plan)).toContain('ReleaseUnavailable');
  });

  it('stops on an invalid spec, withdrawing announced creates, and says why', () => {
    const world = exampleCluster(8);
    world.apply(planRollout(world.snapshot(), world.nowMs), 1);
    world.spec = { ...world.spec, strategy: { waves: [] } };
    const plan = reconcile(world);
    expect(creates(plan)).toEqual([]);
    expect(plan.status.waves[0]).toMatchObject({ cursor: 0, pendingCreates: [] });
    expect(plan.status.conditions[0]).toMatchObject({ type: 'SpecValid', status: 'False', reason: 'E_ROLLOUT_WAVES' });
    expect(eventReasons(plan)).toEqual(['InvalidSpec']);
  });
});
