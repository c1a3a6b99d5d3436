// The benchmarks' scripts load TypeScript (bench/*.ts and the test harness under test/) through
// Vite's module runner, as vitest would, without a build. The runner stays open until close():
// those modules import others lazily (the Kubernetes watch client).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, createServerModuleRunner } from 'vite';

/** A module runner whose cache lives in a temp dir named after `name`; close() removes it. */
export async function openTsRunner(name) {
  const cacheDir = mkdtempSync(join(tmpdir(), `${name}-vite-`));
  const vite = await createServer({
    configFile: false,
    cacheDir,
    logLevel: 'error',
    appType: 'custom',
    server: { middlewareMode: true, hmr: false, ws: false, watch: null },
  });
  const runner = createServerModuleRunner(vite.environments.ssr, { hmr: false });
  return {
    import: (path) => runner.import(path),
    close: async () => {
      await runner.close();
      await vite.close();
      rmSync(cacheDir, { recursive: true, force: true });
    },
  };
}
