#!/usr/bin/env node
// The TUF refresh alone, timed inside one fresh process: the built TufReleaseTrust (dist/) over
// the CLI's own HTTP source, `lookup` then `trusted` (the expiry check), as `fetch` runs them. HTTP
// is loaded first, as the baseline's download loads it too, so what is timed is what TUF adds. A
// first refresh (an empty cache directory), then a refresh with nothing new by the same instance,
// as a long-running daemon makes it. Each refresh's requests are read from the benchmark server.
// Prints {"firstMs": …, "nothingNewMs": …, "firstRequests": […], "nothingNewRequests": […]}.
//
//   node bench/tuf/refresh-alone.mjs METADATA_URL ROOT_FILE TARGET_PATH CACHE_DIR
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [metadataUrl, rootFile, targetPath, cacheDir] = process.argv.slice(2);
const dist = join(import.meta.dirname, '..', '..', 'dist');
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { TufReleaseTrust } = await load('adapters/common/tuf/tuf-release-trust.js');
const { LazyArtifactSource } = await load('adapters/common/http/lazy-artifact-source.js');
const { SystemClock } = await load('adapters/common/runtime/system-clock.js');
const { RedactedUrl } = await load('domain/common/redacted-url.js');

const source = new LazyArtifactSource();
const limits = { timeoutMs: 60_000, idleTimeoutMs: 60_000 };
// Load the HTTP client with one request of its own, not timed: the baseline pays for it too.
const warmUp = await source.open({
  url: RedactedUrl.fromValidated(new URL(`${metadataUrl}timestamp.json`)),
  maxBytes: 1024 * 1024,
  ...limits,
});
for await (const chunk of warmUp.body) void chunk;

const trust = new TufReleaseTrust(source, { metadataUrl, cacheDir, rootFile, ...limits, clock: new SystemClock() });
const first = await refresh();
const nothingNew = await refresh();
process.stdout.write(
  `${JSON.stringify({
    firstMs: first.ms,
    nothingNewMs: nothingNew.ms,
    firstRequests: first.requests,
    nothingNewRequests: nothingNew.requests,
  })}\n`,
);

async function refresh() {
  await requests();
  const start = performance.now();
  const found = await trust.lookup(targetPath);
  await trust.trusted();
  const ms = performance.now() - start;
  if (found.target === null) throw new Error(`${targetPath} is not a signed target`);
  return { ms, requests: await requests() };
}

/** The requests the server saw since the last call: { "GET /metadata/timestamp.json 200": 1, … }. */
async function requests() {
  const response = await fetch(new URL('/__counts?reset=1', metadataUrl));
  return response.json();
}
