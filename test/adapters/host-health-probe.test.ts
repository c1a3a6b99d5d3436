import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeProcessRunner } from '../../src/adapters/common/runtime/node-process-runner.js';
import { EXEC_PROBE_OUTPUT_MAX_BYTES } from '../../src/adapters/node/probe/exec-probe.js';
import { HostHealthProbe } from '../../src/adapters/node/probe/host-health-probe.js';
import { RedactedUrl } from '../../src/domain/common/redacted-url.js';
import type { ProbeTarget } from '../../src/domain/node/health/probe-target.js';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../src/ports/common/process-runner.js';
import { makeScratch, writeExecutable } from '../support/real-tree.js';

const SECRET = 'CANARY-probe-adapter-52d0';

/** The real runner, keeping each request it was given (what the probe asked for, not how often). */
class KeptRequests implements ProcessRunner {
  readonly requests: RunRequest[] = [];
  private readonly real = new NodeProcessRunner();
  run(request: RunRequest): Promise<RunOutcome> {
    this.requests.push(request);
    return this.real.run(request);
  }
}

const exec = (...command: string[]): ProbeTarget => ({ kind: 'exec', command });
const http = (url: string): ProbeTarget => ({ kind: 'http', url: RedactedUrl.fromValidated(new URL(url)) });

describe('exec health probe', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let runner: KeptRequests;
  let probe: HostHealthProbe;
  beforeEach(() => {
    scratch = makeScratch();
    runner = new KeptRequests();
    probe = new HostHealthProbe(runner);
  });
  afterEach(() => scratch.cleanup());

  it('succeeds on exit status 0 and fails on any other, with a stable cause', async () => {
    expect(await probe.attempt(exec('/bin/true'), { timeoutMs: 5_000 })).toEqual({ kind: 'succeeded' });
    expect(await probe.attempt(exec('/bin/sh', '-c', 'exit 3'), { timeoutMs: 5_000 })).toMatchObject({
      kind: 'failed',
      cause: 'exit-status',
    });
    expect(await probe.attempt(exec(join(scratch.root, 'absent')), { timeoutMs: 5_000 })).toMatchObject({
      kind: 'failed',
      cause: 'spawn-failed',
    });
  });

  it('runs no shell: a ";" in an argument is literal', async () => {
    const owned = join(scratch.root, 'owned');
    // Through a shell, the `true` after ";" would make this succeed and `touch` would run.
    const outcome = await probe.attempt(exec('/usr/bin/test', '-e', `${owned}; true; touch ${owned}`), {
      timeoutMs: 5_000,
    });
    expect(outcome).toMatchObject({ kind: 'failed', cause: 'exit-status' });
    expect(existsSync(owned)).toBe(false);
    expect(runner.requests.map((request) => [request.command, ...request.args])).toEqual([
      ['/usr/bin/test', '-e', `${owned}; true; touch ${owned}`],
    ]);
  });

  it('on timeout kills the whole process tree: the grandchild is gone', async () => {
    const script = join(scratch.root, 'hang.sh');
    const pidFile = join(scratch.root, 'grandchild.pid');
    writeExecutable(script, `#!/bin/sh\nsleep 60 &\necho $! > ${pidFile}\nwait\n`);
    const started = Date.now();
    const outcome = await probe.attempt(exec(script), { timeoutMs: 400 });
    expect(outcome).toMatchObject({ kind: 'failed', cause: 'timed-out' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await goneOrZombie(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
  });

  it('bounds the output it reads: a probe printing a megabyte still passes, promptly', async () => {
    const started = Date.now();
    const outcome = await probe.attempt(exec('/bin/sh', '-c', 'head -c 1048576 /dev/zero; exit 0'), {
      timeoutMs: 10_000,
    });
    expect(outcome).toEqual({ kind: 'succeeded' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(runner.requests.every((request) => request.outputMaxBytes <= EXEC_PROBE_OUTPUT_MAX_BYTES)).toBe(true);
  });

  it('an aborted attempt ends early as interrupted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const outcome = await probe.attempt(exec('/bin/sleep', '30'), { timeoutMs: 20_000, signal: controller.signal });
    expect(outcome).toMatchObject({ kind: 'failed', cause: 'interrupted' });
  });
});

describe('HTTP health probe', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const probe = new HostHealthProbe(new NodeProcessRunner());
  const servers: Server[] = [];
  const seen: string[] = [];
  beforeEach(() => {
    scratch = makeScratch();
    seen.length = 0;
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => close(server)));
    scratch.cleanup();
  });

  /** A server whose answer to each request is `respond`; listens on `where` (a socket path, or loopback). */
  async function serve(respond: (response: ServerResponse) => void, where?: string): Promise<Server> {
    const server = createServer((request, response) => {
      seen.push(request.url ?? '');
      respond(response);
    });
    servers.push(server);
    await new Promise<void>((done) =>
      where === undefined ? server.listen(0, '127.0.0.1', done) : server.listen(where, done),
    );
    return server;
  }
  const status = (code: number) => (response: ServerResponse) => response.writeHead(code).end('body');
  const urlOf = (server: Server, host = '127.0.0.1') => `http://${host}:${(server.address() as AddressInfo).port}`;

  it('succeeds on 200–399 and fails on other statuses, over loopback TCP', async () => {
    for (const [code, kind] of [
      [200, 'succeeded'],
      [302, 'succeeded'],
      [399, 'succeeded'],
      [503, 'failed'],
      [404, 'failed'],
    ] as const) {
      const server = await serve(status(code));
      const outcome = await probe.attempt(http(`${urlOf(server)}/healthz`), { timeoutMs: 5_000 });
      expect({ code, outcome: outcome.kind, cause: 'cause' in outcome ? outcome.cause : null }).toEqual({
        code,
        outcome: kind,
        cause: kind === 'failed' ? 'http-status' : null,
      });
    }
  });

  it('reaches localhost, sends the query, and never repeats it in a reason', async () => {
    const good = await serve(status(200));
    expect(await probe.attempt(http(`${urlOf(good, 'localhost')}/h?t=${SECRET}`), { timeoutMs: 5_000 })).toEqual({
      kind: 'succeeded',
    });
    expect(seen).toEqual([`/h?t=${SECRET}`]);
    const bad = await serve(status(500));
    const failed = await probe.attempt(http(`${urlOf(bad)}/h?t=${SECRET}`), { timeoutMs: 5_000 });
    expect(JSON.stringify(failed)).not.toContain(SECRET);
  });

  it('speaks HTTP over a unix socket', async () => {
    const socket = join(scratch.root, 'health.sock');
    await serve(status(204), socket);
    const target: ProbeTarget = { kind: 'unix-http', socket, path: '/healthz?deep=1' };
    expect(await probe.attempt(target, { timeoutMs: 5_000 })).toEqual({ kind: 'succeeded' });
    expect(seen).toEqual(['/healthz?deep=1']);
  });

  it('refuses a host that is not loopback with a stable cause, without connecting', async () => {
    // 192.0.2.0/24 is reserved for documentation: a connection attempt would only time out.
    for (const url of ['http://192.0.2.10:8080/healthz', 'http://[::2]/', 'https://127.0.0.1/']) {
      expect(await probe.attempt(http(url), { timeoutMs: 3_000 })).toMatchObject({
        kind: 'failed',
        cause: 'not-loopback',
      });
    }
  });

  it('times out a server that accepts and never answers, within the bound', async () => {
    const server = await serve(() => undefined);
    const started = Date.now();
    const outcome = await probe.attempt(http(`${urlOf(server)}/`), { timeoutMs: 300 });
    expect(outcome).toMatchObject({ kind: 'failed', cause: 'timed-out' });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('reports a refused connection, a missing socket and an oversized answer as failures', async () => {
    const closed = await serve(status(200));
    const url = urlOf(closed);
    await close(servers.splice(servers.indexOf(closed), 1)[0] ?? closed);
    expect(await probe.attempt(http(`${url}/`), { timeoutMs: 3_000 })).toMatchObject({ cause: 'connection-failed' });
    const missing: ProbeTarget = { kind: 'unix-http', socket: join(scratch.root, 'absent.sock'), path: '/' };
    expect(await probe.attempt(missing, { timeoutMs: 3_000 })).toMatchObject({ cause: 'connection-failed' });
    const huge = await serve((response) => response.writeHead(200, { 'x-filler': 'x'.repeat(64 * 1024) }).end());
    expect(await probe.attempt(http(`${urlOf(huge)}/`), { timeoutMs: 3_000 })).toMatchObject({ cause: 'bad-response' });
  });
});

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((done) => server.close(() => done()));
}

async function goneOrZombie(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 40; attempt += 1) {
    let state: string | undefined;
    try {
      state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    } catch {
      return true;
    }
    if (state === 'Z' || state === 'X') return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}
