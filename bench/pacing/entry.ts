/** What bench/pacing/run.mjs loads (through Vite's module runner, as the TypeScript it is). */
export { runPacingBench, type PacingResult } from './pacing-bench.js';
export { renderPacingReport } from './report.js';
