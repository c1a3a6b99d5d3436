import { Agent, request } from 'node:http';
import { connect, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import {
  MetricsServerListenError,
  startMetricsServer,
  type MetricsServer,
  type MetricsSource,
} from '../../../src/adapters/fleet/metrics/metrics-server.js';
import { PrometheusMetrics } from '../../../src/adapters/fleet/metrics/prometheus-metrics.js';
import { parseExposition, valueOf } from './exposition.js';

const HOST = '127.0.0.1';
/** A close() that waits for its connections instead of destroying them hangs; fail fast instead. */
const CLOSE_TIMEOUT_MS = 5_000;

interface Answer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly allow: string | undefined;
  readonly body: string;
}

function call(server: MetricsServer, path: string, method = 'GET', agent?: Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: HOST, port: server.address.port, path, method, agent }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers['content-type'],
          allow: response.headers['allow'],
          body,
        }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

const started: MetricsServer[] = [];
const blockers: TcpServer[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()));
  await Promise.all(blockers.splice(0).map((blocker) => new Promise((resolve) => blocker.close(resolve))));
});

async function start(
  metrics: MetricsSource = new PrometheusMetrics(),
  ready = (): boolean => true,
): Promise<MetricsServer> {
  const server = await startMetricsServer({ host: HOST, port: 0, metrics, ready });
  started.push(server);
  return server;
}

describe('startMetricsServer', () => {
  it('listens on a free port when asked for port 0', async () => {
    const server = await start();
    expect(server.address.host).toBe(HOST);
    expect(server.address.port).toBeGreaterThan(0);
  });

  it('serves the metrics with the registry content type', async () => {
    const metrics = new PrometheusMetrics();
    metrics.halted('fleet-a', 'FailureBudgetExceeded');
    metrics.leading(true);
    const server = await start(metrics);

    const answer = await call(server, '/metrics');
    expect(answer.status).toBe(200);
    expect(answer.contentType).toBe(metrics.contentType);
    const samples = parseExposition(answer.body);
    expect(valueOf(samples, 'agent_upgrade_controller_leader')).toBe(1);
    expect(
      valueOf(samples, 'agent_upgrade_rollout_halts_total', { rollout: 'fleet-a', reason: 'FailureBudgetExceeded' }),
    ).toBe(1);

    // Every scrape renders what is current; a query string does not change the path.
    metrics.halted('fleet-a', 'FailureBudgetExceeded');
    const later = parseExposition((await call(server, '/metrics?scrape=2')).body);
    expect(
      valueOf(later, 'agent_upgrade_rollout_halts_total', { rollout: 'fleet-a', reason: 'FailureBudgetExceeded' }),
    ).toBe(2);
  });

  it('answers /healthz always and /readyz as ready() says', async () => {
    let ready = false;
    const server = await start(new PrometheusMetrics(), () => ready);

    expect(await call(server, '/healthz')).toMatchObject({ status: 200, body: 'ok' });
    expect((await call(server, '/readyz')).status).toBe(503);
    ready = true;
    expect(await call(server, '/readyz')).toMatchObject({ status: 200, body: 'ok' });
    ready = false;
    expect((await call(server, '/readyz')).status).toBe(503);
  });

  it('counts a throwing ready() as not ready', async () => {
    const server = await start(new PrometheusMetrics(), () => {
      throw new Error('no lease state yet');
    });
    expect((await call(server, '/readyz')).status).toBe(503);
    expect((await call(server, '/healthz')).status).toBe(200);
  });

  it('answers 404 for other paths and 405 for other methods', async () => {
    const server = await start();
    expect((await call(server, '/')).status).toBe(404);
    expect((await call(server, '/metrics/extra')).status).toBe(404);
    expect((await call(server, '/nope', 'POST')).status).toBe(404);
    for (const path of ['/metrics', '/healthz', '/readyz']) {
      for (const method of ['POST', 'PUT', 'DELETE']) {
        const answer = await call(server, path, method);
        expect({ path, method, status: answer.status, allow: answer.allow }).toEqual({
          path,
          method,
          status: 405,
          allow: 'GET',
        });
      }
    }
  });

  it('answers 500 when the metrics cannot be rendered, and keeps serving', async () => {
    const failing: MetricsSource = { contentType: 'text/plain', render: () => Promise.reject(new Error('broken')) };
    const server = await start(failing);
    expect((await call(server, '/metrics')).status).toBe(500);
    expect((await call(server, '/healthz')).status).toBe(200);
  });

  it('rejects the start with the system code when the port is taken', async () => {
    const blocker = createTcpServer();
    blockers.push(blocker);
    blocker.listen(0, HOST);
    await once(blocker, 'listening');
    const taken = (blocker.address() as { port: number }).port;

    const attempt = startMetricsServer({
      host: HOST,
      port: taken,
      metrics: new PrometheusMetrics(),
      ready: () => true,
    });
    await expect(attempt).rejects.toBeInstanceOf(MetricsServerListenError);
    await expect(attempt).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });

  it(
    'closes with keep-alive and idle connections open, and stops listening',
    async () => {
      const server = await start();
      const agent = new Agent({ keepAlive: true });
      expect((await call(server, '/healthz', 'GET', agent)).status).toBe(200);
      // A connection that never sends a request is destroyed too.
      const idle = connect(server.address.port, HOST);
      await once(idle, 'connect');
      const idleClosed = once(idle, 'close');

      await server.close();
      await idleClosed;
      expect(idle.destroyed).toBe(true);
      await expect(call(server, '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      // close() is idempotent.
      await server.close();
      agent.destroy();
    },
    CLOSE_TIMEOUT_MS,
  );

  it(
    'closes while a scrape is still rendering: the connection is destroyed, not waited for',
    async () => {
      let rendering!: () => void;
      const renderStarted = new Promise<void>((resolve) => (rendering = resolve));
      const hanging: MetricsSource = {
        contentType: 'text/plain',
        render: () => {
          rendering();
          return new Promise(() => undefined);
        },
      };
      const server = await start(hanging);
      const scrape = call(server, '/metrics');
      await renderStarted;

      await server.close();
      await expect(scrape).rejects.toMatchObject({ code: 'ECONNRESET' });
    },
    CLOSE_TIMEOUT_MS,
  );
});
