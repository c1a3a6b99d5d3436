/**
 * Waves gated on metrics, against a real Prometheus server scraping an exporter the test
 * controls: the controller's Prometheus client (PrometheusQuery over the hardened HTTP) reads
 * instant vectors and scalars and tells every kind of unusable answer apart by code; and the
 * controller's reconcile (measurements taken, recorded in the status, planned from) lets a wave
 * whose query holds go on, and halts with AnalysisFailed, the query's value recorded, when the
 * gauge goes bad.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LazyArtifactSource } from '../../src/adapters/common/http/lazy-artifact-source.js';
import { MemoryClock } from '../../src/adapters/common/memory/memory-clock.js';
import { PrometheusQuery, readAnswer } from '../../src/adapters/fleet/analysis/prometheus-query.js';
import { ClusterCache } from '../../src/app/fleet/controller/cluster-cache.js';
import { Reconciler } from '../../src/app/fleet/controller/reconciler.js';
import { isLivePhase } from '../../src/domain/fleet/order/snapshot.js';
import type { AgentRolloutStatus } from '../../src/domain/fleet/status/rollout-status.js';
import type { QueryResult } from '../../src/domain/fleet/order/snapshot.js';
import { populatedServer, quietLogger, quietMetrics, ROLLOUT, runSpec } from '../app/controller/controller-fixtures.js';
import type { FakeApiServer } from '../app/controller/fake-api-server.js';
import { waitFor } from '../support/wait-for.js';
import { PrometheusServer, TestExporter } from './prometheus-server.js';

const GAUGE = 'agent_error_ratio';
let exporter: TestExporter;
let prometheus: PrometheusServer;
const client = new PrometheusQuery(new LazyArtifactSource());

const query = (text: string, address = prometheus.address): Promise<QueryResult> =>
  client.instant({ address, query: text, timeoutMs: 5_000 });

/** Sets the gauge and waits (bounded) until the server answers it. */
async function setGauge(value: number): Promise<void> {
  exporter.gauges.set(GAUGE, value);
  const seen = async () => {
    const answer = await query(GAUGE);
    return answer.ok && answer.values[0] === value;
  };
  if (!(await waitFor(seen, 20_000, 200))) throw new Error(`prometheus never answered ${value}: ${prometheus.log()}`);
}

beforeAll(async () => {
  exporter = await TestExporter.start();
  exporter.gauges.set(GAUGE, 0);
  prometheus = await PrometheusServer.start([exporter.port]);
  await setGauge(0.01);
}, 90_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.close();
}, 30_000);

describe('the Prometheus client against a real server', () => {
  it('reads an instant vector and a scalar', async () => {
    expect(await query(GAUGE)).toEqual({ ok: true, values: [0.01] });
    expect(await query(`scalar(${GAUGE}) * 2`)).toEqual({ ok: true, values: [0.02] });
    expect(await query(`${GAUGE}{job="none"}`)).toEqual({ ok: true, values: [] });
  });

  it.each([
    ['a query the server refuses', 'sum(', 'E_HTTP_STATUS'],
    ['a range vector', `${GAUGE}[10s]`, 'E_QUERY_ANSWER'],
    ['a string', '"text"', 'E_QUERY_ANSWER'],
  ])('%s is a result with a code', async (_name, text, code) => {
    expect(await query(text)).toMatchObject({ ok: false, code });
  });

  it('an address nobody listens on is a result with a code', async () => {
    const stopped = await TestExporter.start();
    await stopped.close();
    expect(await query(GAUGE, `http://127.0.0.1:${stopped.port}`)).toMatchObject({ ok: false, code: 'E_NETWORK' });
  });

  it.each([
    ['{"status":"success","data":{"resultType":"scalar","result":[1,"+Inf"]}}', { ok: true, values: [Infinity] }],
    ['{"status":"error","errorType":"bad_data","error":"parse error"}', { ok: false, code: 'E_QUERY_ANSWER' }],
    ['not json', { ok: false, code: 'E_QUERY_ANSWER' }],
    [
      '{"status":"success","data":{"resultType":"vector","result":[{"value":[1]}]}}',
      { ok: false, code: 'E_QUERY_ANSWER' },
    ],
  ])('reads %s', (text, expected) => {
    expect(readAnswer(text)).toMatchObject(expected);
  });
});

/** One canary machine whose wave runs the analysis (a measurement a second, two of them), then the rest. */
function analysedServer(clock: MemoryClock): FakeApiServer {
  const analysis = {
    metrics: [
      {
        name: 'error-ratio',
        prometheus: { address: prometheus.address, query: GAUGE },
        successCondition: 'result[0] < 0.05',
        interval: '1s',
        count: 2,
      },
    ],
  };
  const spec = runSpec({
    strategy: {
      waves: [
        { name: 'canary', count: 1, maxInFlight: 1, failureBudget: 0, analysis },
        { name: 'rest', percent: 100, maxInFlight: 10 },
      ],
      operationTimeout: '10m',
      onFailure: 'Halt',
      quarantineOnHalt: true,
    },
  });
  return populatedServer(clock, 3, spec);
}

function controller(server: FakeApiServer, clock: MemoryClock): { reconcile: () => Promise<AgentRolloutStatus> } {
  const cache = new ClusterCache();
  const reconciler = new Reconciler({
    cluster: server.client('controller'),
    cache,
    clock,
    logger: quietLogger(),
    metrics: quietMetrics,
    metricsQuery: client,
  });
  return {
    reconcile: async () => {
      // The test plays the informers: the cache shows everything written so far.
      server.listInto(cache);
      await reconciler.reconcile(`rollout/${ROLLOUT}`);
      return server.get('rollouts', ROLLOUT)?.status as AgentRolloutStatus;
    },
  };
}

/** The canary's operation completes; the controller plans until its wave bakes. */
async function canaryBakes(server: FakeApiServer, clock: MemoryClock, reconcile: () => Promise<AgentRolloutStatus>) {
  await reconcile();
  for (const operation of server.list('operations'))
    if (isLivePhase(operation.phase))
      server.put('operations', { ...operation, phase: 'Complete', reason: 'Succeeded', completedMs: clock.nowMs() });
  clock.advance(1_000);
  expect((await reconcile()).phase).toBe('Baking');
}

describe('a wave gated on a real Prometheus query', () => {
  it('goes on once every measurement held', async () => {
    await setGauge(0.01);
    const clock = new MemoryClock();
    const server = analysedServer(clock);
    const { reconcile } = controller(server, clock);
    await canaryBakes(server, clock, reconcile);
    expect((await reconcile()).waves[0]?.analysis?.metrics[0]).toMatchObject({ count: 1, successful: 1 });
    clock.advance(1_000);
    expect((await reconcile()).waves[0]?.analysis).toMatchObject({
      phase: 'Successful',
      metrics: [{ name: 'error-ratio', phase: 'Successful', successful: 2, lastValue: '0.01' }],
    });
    clock.advance(1_000);
    const status = await reconcile();
    expect(status.waves.map((wave) => wave.phase)).toEqual(['Completed', 'Progressing']);
  }, 60_000);

  it('halts with AnalysisFailed, the value recorded, when the gauge goes bad', async () => {
    await setGauge(0.01);
    const clock = new MemoryClock();
    const server = analysedServer(clock);
    const { reconcile } = controller(server, clock);
    await canaryBakes(server, clock, reconcile);
    expect((await reconcile()).waves[0]?.analysis?.metrics[0]).toMatchObject({ count: 1, successful: 1 });
    await setGauge(0.3);
    clock.advance(1_000);
    const status = await reconcile();
    expect(status.phase).toBe('Halted');
    expect(status.halt).toMatchObject({ reason: 'AnalysisFailed', wave: 'canary' });
    expect(status.halt?.message).toBe(
      'wave canary: analysis error-ratio failed (1 of 2 measurement(s) failed, 0 error(s) in a row): ' +
        'result[0] < 0.05 did not hold for result 0.3',
    );
    expect(status.waves[0]?.analysis?.metrics[0]).toMatchObject({ phase: 'Failed', failed: 1, lastValue: '0.3' });
    expect(server.list('operations').map((operation) => operation.labels['agent-upgrade.dev/wave'])).toEqual([
      'canary',
    ]);
  }, 60_000);
});
