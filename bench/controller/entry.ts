/** What bench/controller/run.mjs loads (through Vite's module runner, as the TypeScript it is). */
export { runControllerBench, type BenchResult } from './controller-bench.js';
export { renderReport, writesPerMachine } from './report.js';
