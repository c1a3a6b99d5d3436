// ESLint flat config over everything the repository runs: src, test, bench, scripts and examples.
// TypeScript is linted with type information (the promise rules need it); the .mjs scripts and
// tools without. The size rules hold everywhere, tests included.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';
import { localRules } from './scripts/eslint/max-function-lines.mjs';

const TYPESCRIPT = ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'vitest.config.ts'];
const MODULE_SCRIPTS = ['scripts/**/*.mjs', 'bench/**/*.mjs', 'test/**/*.mjs', 'examples/**/*.mjs', 'bin/*'];
// The examples import the package by its name, as an embedder does: their types come from the
// built declarations, so they are type-checked by test/package (a consumer of the packed tarball)
// and linted here without type information.
const EXAMPLES = ['examples/**/*.ts'];

// The application layer reads time only through the Clock port (src/ports/common/clock.ts), so that
// tests and the simulation drive it; these are the ways around it.
const CLOCK_MESSAGE = 'src/app reads time through the Clock port (src/ports/common/clock.ts).';
const TIME_GLOBALS = ['setTimeout', 'setInterval', 'performance'];
const TIME_MODULES = ['timers', 'timers/promises', 'perf_hooks'].flatMap((name) => [name, `node:${name}`]);

// What Node gives every module without an import; the .mjs files are linted without type information.
const NODE_GLOBALS = Object.fromEntries(
  [
    'process',
    'console',
    'Buffer',
    'URL',
    'URLSearchParams',
    'AbortController',
    'AbortSignal',
    'TextDecoder',
    'TextEncoder',
    'setTimeout',
    'clearTimeout',
    'setInterval',
    'clearInterval',
    'setImmediate',
    'performance',
    'fetch',
    'structuredClone',
    'queueMicrotask',
    'globalThis',
  ].map((name) => [name, 'readonly']),
);

export default defineConfig(
  { ignores: ['dist/**', 'node_modules/**', 'build/**'] },
  {
    name: 'agent-upgrade/typescript',
    files: TYPESCRIPT,
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // tsc's noUnusedParameters already accepts a leading underscore for a parameter a signature
      // needs but the body does not (an interface method's options); the two checks agree.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A promise nobody awaits loses its failure; one passed where a callback's result is ignored
      // (an event listener, a forEach) does too.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    name: 'agent-upgrade/module-scripts',
    files: MODULE_SCRIPTS,
    extends: [js.configs.recommended],
    languageOptions: { sourceType: 'module', globals: NODE_GLOBALS },
  },
  {
    name: 'agent-upgrade/examples',
    files: EXAMPLES,
    extends: [js.configs.recommended, tseslint.configs.recommended],
    languageOptions: { sourceType: 'module', globals: NODE_GLOBALS },
  },
  {
    name: 'agent-upgrade/size',
    files: [...TYPESCRIPT, ...MODULE_SCRIPTS, ...EXAMPLES],
    plugins: { local: localRules },
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'local/max-function-lines': ['error', { max: 70 }],
    },
  },
  {
    name: 'agent-upgrade/app-clock',
    files: ['src/app/**/*.ts'],
    rules: {
      'no-restricted-globals': ['error', ...TIME_GLOBALS.map((name) => ({ name, message: CLOCK_MESSAGE }))],
      'no-restricted-properties': [
        'error',
        { object: 'Date', property: 'now', message: CLOCK_MESSAGE },
        ...TIME_GLOBALS.map((property) => ({ object: 'globalThis', property, message: CLOCK_MESSAGE })),
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: CLOCK_MESSAGE },
      ],
      'no-restricted-imports': ['error', { paths: TIME_MODULES.map((name) => ({ name, message: CLOCK_MESSAGE })) }],
    },
  },
);
