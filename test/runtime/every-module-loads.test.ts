/// <reference types="vite/client" />
// Every source module evaluates on the Node running the tests. `npm run test:runtimes` runs this on
// the other supported lines (scripts/other-runtimes.mjs): a module that uses a global, a built-in
// or a syntax one line lacks fails here at once, before any test that reaches it by a longer path.
import { describe, expect, it } from 'vitest';

const MODULES = import.meta.glob<Record<string, unknown>>(['../../src/**/*.ts', '!../../src/**/*.d.ts']);

describe(`every module under src/ on Node ${process.versions.node}`, () => {
  it('finds the sources', () => {
    expect(Object.keys(MODULES).length).toBeGreaterThan(300);
  });

  it.each(Object.keys(MODULES))('%s evaluates', async (path) => {
    const load = MODULES[path];
    if (load === undefined) throw new Error(`no loader for ${path}`);
    const exported = await load();
    expect(typeof exported).toBe('object');
  });
});
