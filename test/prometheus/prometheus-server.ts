/**
 * A real Prometheus server (Debian's `prometheus` package, /usr/bin/prometheus) started for a
 * test on 127.0.0.1, with its configuration and storage in a temporary directory, scraping a
 * small exporter the test serves on loopback and controls: the gauges it sets are what the
 * server answers a moment later (scrape interval 1 s). Never the package's own service.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROMETHEUS = '/usr/bin/prometheus';
const READY_WAIT_MS = 60_000;
const STOP_WAIT_MS = 10_000;

/** The exporter: `/metrics` in the text format, one gauge per name. */
export class TestExporter {
  readonly gauges = new Map<string, number>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(): Promise<TestExporter> {
    let exporter: TestExporter | null = null;
    const server = createServer((req, res) => {
      const lines = [...(exporter?.gauges ?? [])].map(([name, value]) => `# TYPE ${name} gauge\n${name} ${value}\n`);
      res.writeHead(req.url === '/metrics' ? 200 : 404, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(req.url === '/metrics' ? lines.join('') : '');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    exporter = new TestExporter(server, (server.address() as AddressInfo).port);
    return exporter;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export class PrometheusServer {
  private constructor(
    private readonly child: ChildProcess,
    private readonly dir: string,
    readonly address: string,
    private readonly output: string[],
  ) {}

  /** Starts the server scraping `targets` every second; resolves once it answers /-/ready. */
  static async start(targets: readonly number[]): Promise<PrometheusServer> {
    const dir = mkdtempSync(join(tmpdir(), 'prometheus-test-'));
    const config = [
      'global:',
      '  scrape_interval: 1s',
      '  evaluation_interval: 1s',
      'scrape_configs:',
      '  - job_name: agents',
      '    static_configs:',
      `      - targets: [${targets.map((port) => `'127.0.0.1:${port}'`).join(', ')}]`,
    ].join('\n');
    writeFileSync(join(dir, 'prometheus.yml'), `${config}\n`);
    const port = await freePort();
    const output: string[] = [];
    const child = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer): void => void output.push(chunk.toString('utf8'));
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const server = new PrometheusServer(child, dir, `http://127.0.0.1:${port}`, output);
    if (!(await server.ready())) {
      await server.stop();
      throw new Error(`prometheus did not become ready: ${output.join('').slice(-2000)}`);
    }
    return server;
  }

  /** What the server wrote, for a failing test's report. */
  log(): string {
    return this.output.join('').slice(-4000);
  }

  private async ready(): Promise<boolean> {
    const deadline = Date.now() + READY_WAIT_MS;
    while (Date.now() < deadline && this.child.exitCode === null) {
      const answer = await fetch(`${this.address}/-/ready`).catch(() => null);
      if (answer?.status === 200) return true;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return false;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null) {
      const exited = new Promise((resolve) => this.child.once('exit', resolve));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_WAIT_MS);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A port free a moment ago: the kernel's choice for a listener that is closed again at once. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
