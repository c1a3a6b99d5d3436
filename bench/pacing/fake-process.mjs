#!/usr/bin/env node
// The pacing benchmark's fake API server in a process of its own (see fake-host.ts).
//   node bench/pacing/fake-process.mjs SIZE SEED WRITE_LATENCY_MS   (forked, with an IPC channel)
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTsRunner } from '../ts-runner.mjs';

const [size, seed, writeLatencyMs] = process.argv.slice(2).map(Number);
const runner = await openTsRunner('bench-pacing-fake');
const host = await runner.import(join(dirname(fileURLToPath(import.meta.url)), 'fake-host.ts'));
const handle = await host.hostFake(size, seed, writeLatencyMs, (message) => process.send(message));
process.on('message', async (request) => {
  await handle(request);
  if (request.type !== 'close') return;
  await runner.close();
  process.disconnect();
});
