import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import { formatTimestamp } from '../../../domain/fleet/spec/time-text.js';
import type { WaveStatus } from '../../../domain/fleet/status/rollout-status.js';
import type { RolloutView } from '../rollout/rollout-view.js';
import { columns, printable, record, shown } from './render-text.js';
import { waitingOn } from './rollout-gate.js';

/** A bar narrower than this says too little: it is left out, and the counts stay. */
const BAR_WIDTH_MIN = 8;
const BAR_WIDTH_MAX = 40;

/**
 * One frame of `rollout status NAME --watch` on a terminal `width` columns wide: the rollout in
 * one line, what it waits on, a progress bar per wave and the failures. No line is wider than the
 * terminal, so the frame takes exactly as many rows as it has lines and redraws in place.
 */
export function renderWatchFrame(view: RolloutView, width: number): string[] {
  const raw = record(view.status);
  const status = readPreviousStatus(view.status);
  const counts = record(raw['counts']);
  const failures = record(raw['failures']);
  const lines = [
    `Rollout ${view.name} of ${shown(view.release)}: ${view.phase ?? 'no status yet'}`,
    `Progress: ${shown(raw['progress'])}, ${shown(counts['inFlight'])} in flight, ${shown(counts['failed'])} failed`,
    `Waiting on: ${waitingOn(view) ?? 'nothing: the rollout has ended'}`,
  ];
  if (status.waves.length > 0) lines.push('', ...waveBars(status.waves, width));
  const tally = (source: unknown): string =>
    Object.entries(record(source))
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, count]) => `${printable(key)} ${shown(count)}`)
      .join(', ');
  const byReason = tally(failures['byReason']);
  const byLabel = tally(failures['byLabel']);
  if (byReason !== '') lines.push('', `Failures by reason: ${byReason}`);
  if (byLabel !== '') lines.push(`Failures by label:  ${byLabel}`);
  const halt = status.halt;
  if (halt !== null) lines.push('', `Halt: ${halt.reason} in wave ${shown(halt.wave)}: ${shown(halt.message)}`);
  lines.push('', `Read at ${formatTimestamp(view.readAtMs)}; Ctrl-C stops watching (the rollout goes on)`);
  return lines.map((line) => fit(line, width));
}

/** One row per wave: name, phase, a bar of machines dispatched of its size, the counts and its budget. */
function waveBars(waves: readonly WaveStatus[], width: number): string[] {
  const cells = waves.map((wave) => [
    shown(wave.name),
    wave.phase,
    `${wave.cursor}/${wave.size}`,
    `failures ${wave.failureBudget.used}/${wave.failureBudget.allowed}`,
  ]);
  const fixed = columns(cells.map((row) => row.slice(0, 2)));
  const rest = columns(cells.map((row) => row.slice(2)));
  const used = Math.max(...fixed.map((line) => line.length)) + Math.max(...rest.map((line) => line.length)) + 6;
  const barWidth = Math.min(BAR_WIDTH_MAX, width - 1 - used);
  return waves.map((wave, index) => {
    const left = (fixed[index] ?? '').padEnd(Math.max(...fixed.map((line) => line.length)));
    const bar = barWidth < BAR_WIDTH_MIN ? '' : `  ${progressBar(wave, barWidth)}`;
    return `${left}${bar}  ${rest[index] ?? ''}`;
  });
}

function progressBar(wave: WaveStatus, width: number): string {
  const inner = width - 2;
  const filled = wave.size === 0 ? inner : Math.min(inner, Math.floor((wave.cursor / wave.size) * inner));
  return `[${'#'.repeat(filled)}${'.'.repeat(inner - filled)}]`;
}

/**
 * A line cut to one less than the terminal's width: a wrapped line would break the redraw, and
 * writing the last column makes many terminals wrap.
 */
function fit(line: string, width: number): string {
  const room = Math.max(1, width - 1);
  return line.length <= room ? line : `${line.slice(0, room - 1)}~`;
}

/**
 * `--watch` off a terminal: one line per change of what an operator follows (phase, wave,
 * progress, in flight, failures, halt), stamped with the read's time.
 */
export function renderWatchLine(view: RolloutView): { readonly key: string; readonly line: string } {
  const raw = record(view.status);
  const counts = record(raw['counts']);
  const halt = readPreviousStatus(view.status).halt;
  const key =
    `${view.name} ${view.phase ?? 'NoStatus'} wave=${shown(raw['currentWave'])} progress=${shown(raw['progress'])} ` +
    `inFlight=${shown(counts['inFlight'])} failed=${shown(counts['failed'])}` +
    (halt === null ? '' : ` halt=${halt.reason}`);
  return { key, line: `${formatTimestamp(view.readAtMs)} ${key}` };
}
