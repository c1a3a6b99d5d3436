#!/usr/bin/env node
// A static file server for the benchmark, run as its own process so the client measured does
// not share an event loop or a CPU budget with it. Prints its port, then serves DIR.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';

const directory = process.argv[2];
const server = createServer((request, response) => {
  const name = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
  if (name.includes('..') || name === '') {
    response.writeHead(404).end();
    return;
  }
  const path = join(directory, name);
  let size;
  try {
    size = statSync(path).size;
  } catch {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/gzip', 'content-length': String(size) });
  createReadStream(path, { highWaterMark: 1024 * 1024 }).pipe(response);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
