import { defineConfig } from 'vitest/config';

/** Benchmarks run on demand (`npm run bench:daemon`), never as part of `npm test`. */
export default defineConfig({
  test: {
    include: ['bench/**/*.bench.ts'],
    environment: 'node',
    pool: 'forks',
    server: { deps: { inline: ['clipanion'] } },
  },
});
