#!/usr/bin/env node
// The TUF benchmark's release server, run as its own process so the client measured does not
// share an event loop or a CPU budget with it. Serves DIR (metadata/ and targets/ beneath it),
// counts every request by method, path and status, and prints its port.
//
//   GET /__counts           the counts since the last reset, as JSON: { "GET /metadata/timestamp.json 200": 1, … }
//   GET /__counts?reset=1   the same, then starts counting afresh
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join, normalize } from 'node:path';

const directory = process.argv[2];
let counts = {};

const server = createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://x');
  if (url.pathname === '/__counts') {
    const body = JSON.stringify(counts);
    if (url.searchParams.get('reset') === '1') counts = {};
    // Not kept alive: the runner asks only between fetches, seconds apart, and a pooled connection
    // the server's keep-alive timeout closed meanwhile would fail its next question.
    response.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(body);
    return;
  }
  const status = serve(decodeURIComponent(url.pathname), response);
  const key = `${request.method} ${url.pathname} ${status}`;
  counts[key] = (counts[key] ?? 0) + 1;
});

/** Answers with the file under DIR, or 404; returns the status sent. */
function serve(pathname, response) {
  const name = normalize(pathname).replace(/^\/+/, '');
  let size = null;
  if (!name.includes('..') && name !== '') {
    try {
      const stat = statSync(join(directory, name));
      if (stat.isFile()) size = stat.size;
    } catch {
      size = null;
    }
  }
  if (size === null) {
    response.writeHead(404).end();
    return 404;
  }
  const type = name.endsWith('.json') ? 'application/json' : 'application/gzip';
  response.writeHead(200, { 'content-type': type, 'content-length': String(size) });
  createReadStream(join(directory, name), { highWaterMark: 1024 * 1024 }).pipe(response);
  return 200;
}

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address !== null ? address.port : 0}\n`);
});
