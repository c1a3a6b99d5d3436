#!/usr/bin/env node
// The pacing benchmark's fake API server in a process of its own (see fake-host.ts).
//   node bench/pacing/fake-process.mjs SIZE SEED WRITE_LATENCY_MS   (forked, with an IPC channel)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer, createServerModuleRunner } from 'vite';

const [size, seed, writeLatencyMs] = process.argv.slice(2).map(Number);
const cacheDir = mkdtempSync(join(tmpdir(), 'bench-pacing-fake-vite-'));
const vite = await createServer({
  configFile: false,
  cacheDir,
  logLevel: 'error',
  appType: 'custom',
  server: { middlewareMode: true, hmr: false, ws: false, watch: null },
});
const runner = createServerModuleRunner(vite.environments.ssr, { hmr: false });
const host = await runner.import(join(dirname(fileURLToPath(import.meta.url)), 'fake-host.ts'));
const handle = await host.hostFake(size, seed, writeLatencyMs, (message) => process.send(message));
process.on('message', async (request) => {
  await handle(request);
  if (request.type !== 'close') return;
  await runner.close();
  await vite.close();
  rmSync(cacheDir, { recursive: true, force: true });
  process.disconnect();
});
