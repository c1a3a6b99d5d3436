/** The pacing benchmark's tables, as docs/benchmarks.md shows them. */
import type { PacingResult } from './pacing-bench.js';

const ratio = (baseline: number, value: number): string => (value > 0 ? `${(baseline / value).toFixed(1)}×` : '—');

export function renderPacingReport(result: PacingResult): string {
  const { sequential, batched } = result.dispatch;
  const { plain, withRetryAfter } = result.retryAfter;
  return [
    `| ${result.size.toLocaleString('en')} machines, no limit | creates | create phase | creates/s in it | wave (rollout created → last create) |`,
    '|---|---|---|---|---|',
    `| one at a time (cap 1, baseline) | ${result.size} | ${sequential.createPhaseSeconds} s | ${sequential.createsPerSecond} | ${sequential.waveSeconds} s |`,
    `| batches 1, 2, 4, … ${batched.batchMax} | ${result.size} | ${batched.createPhaseSeconds} s | ${batched.createsPerSecond} | ${batched.waveSeconds} s |`,
    `| speed-up | | **${ratio(sequential.createPhaseSeconds, batched.createPhaseSeconds)}** | | ${ratio(sequential.waveSeconds, batched.waveSeconds)} |`,
    '',
    `| ${result.pacedSize} machines, QPS 20, burst 30 | writes sent | writes/s after the burst | creates/s after the burst | wave |`,
    '|---|---|---|---|---|',
    `| paced | ${result.rate.writes} | ${result.rate.writesPerSecond} | ${result.rate.createsPerSecond} | ${result.rate.waveSeconds} s |`,
    '',
    '| 429 at the 150th create, QPS 20 | pause before the next write | writes in the second after it | wave |',
    '|---|---|---|---|',
    `| plain 429 (baseline: the loop's backoff) | ${plain.pauseSeconds} s | ${plain.writesInNextSecond} | ${plain.waveSeconds} s |`,
    `| 429 with Retry-After: 3 | ${withRetryAfter.pauseSeconds} s | ${withRetryAfter.writesInNextSecond} | ${withRetryAfter.waveSeconds} s |`,
    '',
    `targets: dispatch ≥ 5× ${result.targets.dispatchRatio ? 'met' : 'MISSED'}; rate 20 ± 10% ${result.targets.rate ? 'met' : 'MISSED'}; Retry-After honoured ${result.targets.retryAfter ? 'met' : 'MISSED'}`,
  ].join('\n');
}
