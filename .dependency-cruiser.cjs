/**
 * The hexagonal dependency rule (SPEC §2). `npm run depcheck` fails the build on any violation.
 * The purity rules that imports cannot express (clock, randomness, logging, decorators in the
 * domain) are checked by scripts/check-domain-purity.mjs.
 */
module.exports = {
  forbidden: [
    {
      name: 'domain-imports-only-domain',
      comment: 'src/domain is pure: it may import only other domain modules (no node:, no packages).',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/' },
    },
    {
      name: 'ports-import-only-domain',
      comment: 'src/ports holds interfaces that may refer to domain types only.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { pathNot: '^src/(ports|domain)/' },
    },
    {
      name: 'adapters-never-import-app',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/app/' },
    },
    {
      name: 'only-entry-points-import-app',
      comment: 'Nothing outside src/app imports it, except the package entry points.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(app/|index\\.ts$|testing\\.ts$)' },
      to: { path: '^src/app/' },
    },
    {
      name: 'node-never-imports-fleet',
      comment:
        'The two contexts (docs/architecture.md#two-contexts): the node upgrader never imports the fleet controller; both may import common.',
      severity: 'error',
      from: { path: '^src/[a-z]+/node/' },
      to: { path: '^src/[a-z]+/fleet/' },
    },
    {
      name: 'fleet-never-imports-node',
      comment: 'The fleet controller never imports the node upgrader.',
      severity: 'error',
      from: { path: '^src/[a-z]+/fleet/' },
      to: { path: '^src/[a-z]+/node/' },
    },
    {
      name: 'common-imports-neither-context',
      comment: 'What both contexts use depends on neither.',
      severity: 'error',
      from: { path: '^src/[a-z]+/common/' },
      to: { path: '^src/[a-z]+/(node|fleet)/' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
    {
      name: 'no-dev-dependencies-in-src',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(adapters/[a-z]+/memory/|testing\\.ts$)' },
      to: { dependencyTypes: ['npm-dev'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
