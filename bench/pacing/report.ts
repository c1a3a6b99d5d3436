/** The pacing benchmark's tables, as docs/benchmarks.md shows them. */
import type { PacingResult } from './pacing-bench.js';

const secondsText = (seconds: number): string => `${seconds.toFixed(1)} s`;
const ratio = (baseline: number, value: number): string => (value > 0 ? `${(baseline / value).toFixed(1)}×` : '—');

export function renderPacingReport(result: PacingResult): string {
  const { before, sequential, batched } = result.dispatch;
  const { plain, withRetryAfter } = result.retryAfter;
  return [
    `| ${result.size.toLocaleString('en')} machines, no limit | create phase | creates/s in it | wave (rollout created → last create) | wave speed-up |`,
    '|---|---|---|---|---|',
    `| before: one at a time, every step settling (baseline) | ${secondsText(before.createPhaseSeconds)} | ${before.createsPerSecond} | ${secondsText(before.waveSeconds)} | 1.0× |`,
    `| one at a time, each step after the last | ${secondsText(sequential.createPhaseSeconds)} | ${sequential.createsPerSecond} | ${secondsText(sequential.waveSeconds)} | ${ratio(before.waveSeconds, sequential.waveSeconds)} |`,
    `| slow-start batches up to ${batched.batchMax}, each step after the last (now) | ${secondsText(batched.createPhaseSeconds)} | ${batched.createsPerSecond} | ${secondsText(batched.waveSeconds)} | **${ratio(before.waveSeconds, batched.waveSeconds)}** |`,
    '',
    `| ${result.pacedSize} machines, QPS 20, burst 30 | writes sent | writes/s after the burst | creates/s after the burst | wave |`,
    '|---|---|---|---|---|',
    `| paced | ${result.rate.writes} | ${result.rate.writesPerSecond} | ${result.rate.createsPerSecond} | ${secondsText(result.rate.waveSeconds)} |`,
    '',
    '| 429 at the 150th create, QPS 20 | pause before the next write | writes in the second after it | wave |',
    '|---|---|---|---|',
    `| plain 429 (baseline: the loop's backoff) | ${plain.pauseSeconds} s | ${plain.writesInNextSecond} | ${secondsText(plain.waveSeconds)} |`,
    `| 429 with Retry-After: 3 | ${withRetryAfter.pauseSeconds} s | ${withRetryAfter.writesInNextSecond} | ${secondsText(withRetryAfter.waveSeconds)} |`,
    '',
    `targets: dispatch ≥ 5× ${result.targets.dispatchRatio ? 'met' : 'MISSED'}; rate 20 ± 10% ${result.targets.rate ? 'met' : 'MISSED'}; Retry-After honoured ${result.targets.retryAfter ? 'met' : 'MISSED'}`,
  ].join('\n');
}
