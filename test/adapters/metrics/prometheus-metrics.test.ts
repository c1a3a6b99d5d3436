import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { PrometheusMetrics } from '../../../src/adapters/fleet/metrics/prometheus-metrics.js';
import type {
  AgentRolloutStatus,
  RolloutCounts,
  RolloutPhase,
} from '../../../src/domain/fleet/status/rollout-status.js';
import { ROLLOUT_PHASES } from '../../../src/domain/fleet/status/rollout-status.js';
import { parseExposition, samplesOf, valueOf, type Sample } from './exposition.js';

const COUNTS: RolloutCounts = {
  targets: 400,
  excluded: { optedOut: 3, alreadyAtTarget: 5, conflict: 2, vanished: 1, noArtifact: 4 },
  pending: 300,
  inFlight: 10,
  succeeded: 70,
  failed: 6,
  timedOut: 2,
  lost: 1,
  rolledBack: 0,
};

function status(
  phase: RolloutPhase,
  byReason: Record<string, number>,
  counts: RolloutCounts = COUNTS,
): AgentRolloutStatus {
  return {
    observedGeneration: 1,
    phase,
    progress: `${counts.succeeded}/${counts.targets}`,
    counts,
    waves: [],
    failures: { sample: [], byReason, byLabel: {} },
    conditions: [],
  };
}

async function scrape(metrics: PrometheusMetrics): Promise<Sample[]> {
  return parseExposition(await metrics.render());
}

describe('PrometheusMetrics', () => {
  it('reports the machines of a rollout by state, its failures by reason and its phase', async () => {
    const metrics = new PrometheusMetrics();
    metrics.rolloutObserved('fleet-a', status('Progressing', { DaemonFailed: 4, ExecutionFailed: 2 }));
    const samples = await scrape(metrics);

    const machines = (state: string): number | undefined =>
      valueOf(samples, 'agent_upgrade_rollout_machines', { rollout: 'fleet-a', state });
    expect(samplesOf(samples, 'agent_upgrade_rollout_machines')).toHaveLength(12);
    expect(
      Object.fromEntries(
        [
          'pending',
          'in_flight',
          'succeeded',
          'failed',
          'timed_out',
          'lost',
          'rolled_back',
          'excluded_opted_out',
          'excluded_already_at_target',
          'excluded_conflict',
          'excluded_vanished',
          'excluded_no_artifact',
        ].map((state) => [state, machines(state)]),
      ),
    ).toEqual({
      pending: 300,
      in_flight: 10,
      succeeded: 70,
      failed: 6,
      timed_out: 2,
      lost: 1,
      rolled_back: 0,
      excluded_opted_out: 3,
      excluded_already_at_target: 5,
      excluded_conflict: 2,
      excluded_vanished: 1,
      excluded_no_artifact: 4,
    });

    expect(valueOf(samples, 'agent_upgrade_rollout_failures', { rollout: 'fleet-a', reason: 'DaemonFailed' })).toBe(4);
    expect(valueOf(samples, 'agent_upgrade_rollout_failures', { rollout: 'fleet-a', reason: 'ExecutionFailed' })).toBe(
      2,
    );

    const phases = samplesOf(samples, 'agent_upgrade_rollout_phase', { rollout: 'fleet-a' });
    expect(phases.map((sample) => sample.labels['phase']).sort()).toEqual([...ROLLOUT_PHASES].sort());
    expect(phases.filter((sample) => sample.value === 1).map((sample) => sample.labels['phase'])).toEqual([
      'Progressing',
    ]);
    expect(phases.filter((sample) => sample.value === 0)).toHaveLength(11);
  });

  it('keeps only the latest status: a reason no longer reported loses its series, the phase moves', async () => {
    const metrics = new PrometheusMetrics();
    metrics.rolloutObserved('fleet-a', status('Progressing', { DaemonFailed: 4, ExecutionFailed: 2 }));
    metrics.rolloutObserved('fleet-a', status('Halted', { DaemonFailed: 5 }, { ...COUNTS, failed: 5, inFlight: 0 }));
    const samples = await scrape(metrics);

    expect(samplesOf(samples, 'agent_upgrade_rollout_failures').map((sample) => sample.labels)).toEqual([
      { rollout: 'fleet-a', reason: 'DaemonFailed' },
    ]);
    expect(valueOf(samples, 'agent_upgrade_rollout_failures', { rollout: 'fleet-a', reason: 'DaemonFailed' })).toBe(5);
    expect(valueOf(samples, 'agent_upgrade_rollout_machines', { rollout: 'fleet-a', state: 'in_flight' })).toBe(0);
    expect(valueOf(samples, 'agent_upgrade_rollout_phase', { rollout: 'fleet-a', phase: 'Halted' })).toBe(1);
    expect(valueOf(samples, 'agent_upgrade_rollout_phase', { rollout: 'fleet-a', phase: 'Progressing' })).toBe(0);
  });

  it('drops every series of a forgotten rollout and keeps the others', async () => {
    const metrics = new PrometheusMetrics();
    metrics.rolloutObserved('fleet-a', status('Halted', { DaemonFailed: 1 }));
    metrics.halted('fleet-a', 'FailureBudgetExceeded');
    metrics.rolloutObserved('fleet-b', status('Progressing', { ExecutionFailed: 3 }));
    metrics.halted('fleet-b', 'OperationsStalled');

    metrics.rolloutForgotten('fleet-a');
    const samples = await scrape(metrics);

    expect(samples.filter((sample) => sample.labels['rollout'] === 'fleet-a')).toEqual([]);
    for (const name of [
      'agent_upgrade_rollout_machines',
      'agent_upgrade_rollout_failures',
      'agent_upgrade_rollout_phase',
      'agent_upgrade_rollout_halts_total',
    ]) {
      expect(samplesOf(samples, name, { rollout: 'fleet-b' }).length, name).toBeGreaterThan(0);
    }
    // Forgetting a rollout never seen, or twice, is harmless.
    metrics.rolloutForgotten('fleet-a');
    metrics.rolloutForgotten('never-seen');
    expect(await scrape(metrics)).toEqual(samples);
  });

  it('counts halts by rollout and reason', async () => {
    const metrics = new PrometheusMetrics();
    metrics.halted('fleet-a', 'FailureBudgetExceeded');
    metrics.halted('fleet-a', 'FailureBudgetExceeded');
    metrics.halted('fleet-a', 'ReleaseQuarantined');
    const samples = await scrape(metrics);

    const halts = (reason: string): number | undefined =>
      valueOf(samples, 'agent_upgrade_rollout_halts_total', { rollout: 'fleet-a', reason });
    expect(halts('FailureBudgetExceeded')).toBe(2);
    expect(halts('ReleaseQuarantined')).toBe(1);
  });

  it('observes reconcile durations in seconds, by outcome', async () => {
    const metrics = new PrometheusMetrics();
    metrics.reconciled(3, 'applied');
    metrics.reconciled(1500, 'applied');
    metrics.reconciled(20, 'conflict');
    const samples = await scrape(metrics);

    const applied = { outcome: 'applied' };
    expect(valueOf(samples, 'agent_upgrade_reconcile_duration_seconds_count', applied)).toBe(2);
    expect(valueOf(samples, 'agent_upgrade_reconcile_duration_seconds_sum', applied)).toBeCloseTo(1.503, 9);
    const bucket = (le: string): number | undefined =>
      valueOf(samples, 'agent_upgrade_reconcile_duration_seconds_bucket', { ...applied, le });
    expect([bucket('0.001'), bucket('0.005'), bucket('1'), bucket('2.5'), bucket('10'), bucket('+Inf')]).toEqual([
      0, 1, 1, 2, 2, 2,
    ]);
    expect(valueOf(samples, 'agent_upgrade_reconcile_duration_seconds_count', { outcome: 'conflict' })).toBe(1);

    metrics.reconciled(-5, 'error');
    const after = await scrape(metrics);
    expect(valueOf(after, 'agent_upgrade_reconcile_duration_seconds_count', { outcome: 'error' })).toBe(1);
    expect(valueOf(after, 'agent_upgrade_reconcile_duration_seconds_sum', { outcome: 'error' })).toBe(0);
  });

  it('counts API requests by verb, resource and code, "none" when no answer came', async () => {
    const metrics = new PrometheusMetrics();
    metrics.apiRequest({ verb: 'patch', resource: 'agentrollouts', code: 200 });
    metrics.apiRequest({ verb: 'patch', resource: 'agentrollouts', code: 200 });
    metrics.apiRequest({ verb: 'patch', resource: 'agentrollouts', code: 409 });
    metrics.apiRequest({ verb: 'create', resource: 'machineoperations', code: null });
    const samples = await scrape(metrics);

    const requests = (verb: string, resource: string, code: string): number | undefined =>
      valueOf(samples, 'agent_upgrade_api_requests_total', { verb, resource, code });
    expect(requests('patch', 'agentrollouts', '200')).toBe(2);
    expect(requests('patch', 'agentrollouts', '409')).toBe(1);
    expect(requests('create', 'machineoperations', 'none')).toBe(1);
  });

  it('reports leadership as 0 or 1', async () => {
    const metrics = new PrometheusMetrics();
    metrics.leading(true);
    expect(valueOf(await scrape(metrics), 'agent_upgrade_controller_leader')).toBe(1);
    metrics.leading(false);
    expect(valueOf(await scrape(metrics), 'agent_upgrade_controller_leader')).toBe(0);
  });

  it('a replica that stops leading drops every rollout series; the next term reports afresh', async () => {
    const metrics = new PrometheusMetrics();
    metrics.leading(true);
    metrics.rolloutObserved('fleet-a', status('Halted', { DaemonFailed: 1 }));
    metrics.halted('fleet-a', 'FailureBudgetExceeded');
    metrics.rolloutObserved('fleet-b', status('Progressing', {}));
    metrics.leading(false);
    expect((await scrape(metrics)).filter((sample) => sample.labels['rollout'] !== undefined)).toEqual([]);
    metrics.leading(true);
    metrics.rolloutObserved('fleet-b', status('Progressing', {}));
    const samples = await scrape(metrics);
    expect(valueOf(samples, 'agent_upgrade_rollout_phase', { rollout: 'fleet-b', phase: 'Progressing' })).toBe(1);
    expect(samples.filter((sample) => sample.labels['rollout'] === 'fleet-a')).toEqual([]);
  });

  it('reports each trusted role: when it expires, and whether within the warning window', async () => {
    const metrics = new PrometheusMetrics();
    metrics.trustMetadataObserved([
      { role: 'root', expiresMs: Date.UTC(2027, 0, 1), expiringSoon: false },
      { role: 'timestamp', expiresMs: Date.UTC(2026, 0, 2), expiringSoon: true },
    ]);
    const samples = await scrape(metrics);
    const expiry = (role: string) =>
      valueOf(samples, 'agent_upgrade_trust_metadata_expiry_timestamp_seconds', { role });
    const expiring = (role: string) => valueOf(samples, 'agent_upgrade_trust_metadata_expiring', { role });
    expect([expiry('root'), expiry('timestamp')]).toEqual([Date.UTC(2027, 0, 1) / 1000, Date.UTC(2026, 0, 2) / 1000]);
    expect([expiring('root'), expiring('timestamp')]).toEqual([0, 1]);

    metrics.trustMetadataObserved([{ role: 'timestamp', expiresMs: null, expiringSoon: true }]);
    const after = await scrape(metrics);
    expect(
      valueOf(after, 'agent_upgrade_trust_metadata_expiry_timestamp_seconds', { role: 'timestamp' }),
    ).toBeUndefined();
    expect(valueOf(after, 'agent_upgrade_trust_metadata_expiring', { role: 'timestamp' })).toBe(1);
  });

  it('never throws: a malformed status is reported and leaves the previous series whole', async () => {
    const errors: string[] = [];
    const metrics = new PrometheusMetrics({ onError: (_error, method) => errors.push(method) });
    metrics.rolloutObserved('fleet-a', status('Progressing', { DaemonFailed: 1 }));
    const before = await scrape(metrics);

    const malformed = { ...status('Halted', {}), counts: { ...COUNTS, failed: Number.NaN } };
    expect(() => metrics.rolloutObserved('fleet-a', malformed)).not.toThrow();
    expect(() => metrics.rolloutObserved('fleet-a', {} as AgentRolloutStatus)).not.toThrow();
    expect(() => metrics.reconciled(Number.NaN, 'applied')).not.toThrow();
    expect(errors).toEqual(['rolloutObserved', 'rolloutObserved', 'reconciled']);
    expect(await scrape(metrics)).toEqual(before);

    const throwingReporter = new PrometheusMetrics({
      onError: () => {
        throw new Error('the logger is gone');
      },
    });
    expect(() => throwingReporter.reconciled(Number.POSITIVE_INFINITY, 'error')).not.toThrow();
  });

  it('uses a registry of its own: instances are independent and the global registry stays empty', async () => {
    const first = new PrometheusMetrics();
    const second = new PrometheusMetrics();
    first.leading(true);
    second.leading(false);

    expect(valueOf(await scrape(first), 'agent_upgrade_controller_leader')).toBe(1);
    expect(valueOf(await scrape(second), 'agent_upgrade_controller_leader')).toBe(0);
    expect(globalRegistry.getSingleMetric('agent_upgrade_controller_leader')).toBeUndefined();
    expect(first.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});
