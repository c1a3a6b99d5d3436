// ESLint flat config. `npm run lint` lints src/ only; tests, bench and scripts get their own
// block (with their own globs and rule choices) when they are brought in.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const SOURCE = ['src/**/*.ts'];

// The application layer reads time only through the Clock port (src/ports/common/clock.ts), so that
// tests and the simulation drive it; these are the ways around it.
const CLOCK_MESSAGE = 'src/app reads time through the Clock port (src/ports/common/clock.ts).';
const TIME_GLOBALS = ['setTimeout', 'setInterval', 'performance'];
const TIME_MODULES = ['timers', 'timers/promises', 'perf_hooks'].flatMap((name) => [name, `node:${name}`]);

export default defineConfig(
  {
    name: 'agent-upgrade/source',
    files: SOURCE,
    extends: [js.configs.recommended, tseslint.configs.recommended],
    rules: {
      // tsc's noUnusedParameters already accepts a leading underscore for a parameter a signature
      // needs but the body does not (an interface method's options); the two checks agree.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    name: 'agent-upgrade/size',
    files: SOURCE,
    rules: {
      'max-lines': ['error', { max: 300, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 70, skipBlankLines: false, skipComments: false }],
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
