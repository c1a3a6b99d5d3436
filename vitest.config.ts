import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 30_000,
    // clipanion 3.2.1 imports a directory from its ESM entry; inlining lets vite resolve it.
    server: { deps: { inline: ['clipanion'] } },
  },
});
