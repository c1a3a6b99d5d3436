import { readPreviousStatus } from '../../../domain/fleet/status/read-rollout-status.js';
import type { WaveStatus } from '../../../domain/fleet/status/rollout-status.js';
import type { RolloutApproval, RolloutChange } from '../rollout/rollout-control.js';
import type { RolloutView } from '../rollout/rollout-view.js';
import { columns, printable, record, shown, type Json } from './render-text.js';
import { waitingOn } from './rollout-gate.js';

/** `rollout status NAME` as text: kubectl-style `Key: value` lines, then one table row per wave. */
export function renderRollout(view: RolloutView): string[] {
  const raw = record(view.status);
  const status = readPreviousStatus(view.status);
  const counts = record(raw['counts']);
  const excluded = record(counts['excluded']);
  const lines: [string, string][] = [
    ['Name', view.name],
    ['Release', shown(view.release)],
    ['State', shown(view.state)],
    ['Phase', view.phase ?? '- (no status yet: the controller has not reported on this rollout)'],
    ['Progress', shown(raw['progress'])],
    ['Current wave', shown(raw['currentWave'])],
    ['Generation', `${shown(view.generation)} (status observed ${shown(raw['observedGeneration'])})`],
  ];
  if (view.status !== null) {
    const named = (source: Json, keys: readonly string[]): string =>
      keys.map((key) => `${key} ${shown(source[key])}`).join(', ');
    lines.push(
      [
        'Counts',
        named(counts, ['targets', 'pending', 'inFlight', 'succeeded', 'failed', 'timedOut', 'lost', 'rolledBack']),
      ],
      ['Excluded', named(excluded, ['optedOut', 'alreadyAtTarget', 'conflict', 'vanished', 'noArtifact'])],
    );
  }
  const waiting = waitingOn(view);
  if (waiting !== null) lines.push(['Waiting on', waiting]);
  if (view.resumeFromHalt !== '') lines.push(['Resume from halt', shown(view.resumeFromHalt)]);
  const { halt, rollback } = status;
  if (halt !== null) {
    lines.push(['Halt', `${shown(halt.id)}: ${halt.reason} in wave ${shown(halt.wave)} at ${shown(halt.at)}`]);
    if (halt.message !== '') lines.push(['Halt message', shown(halt.message)]);
    if (view.phase === 'Halted')
      lines.push(...nextSteps(view, record(raw['halt'])['quarantine'] === 'Applied', halt.reason));
  }
  if (rollback !== null) {
    lines.push([
      'Rollback',
      `${rollback.phase}, scope ${rollback.scope}${rollback.wave === undefined ? '' : ` (wave ${shown(rollback.wave)})`}: ` +
        `${rollback.rolledBack}/${rollback.size} rolled back, ${rollback.inFlight} in flight, ` +
        `failures ${rollback.failureBudget.used}/${rollback.failureBudget.allowed}`,
    ]);
  }
  lines.push(...failureLines(record(raw['failures'])));
  const width = Math.max(...lines.map(([key]) => key.length)) + 2;
  const text = lines.map(([key, value]) => `${`${key}:`.padEnd(width)}${value}`);
  if (status.waves.length === 0) return text;
  const analyses = analysisLines(status.waves);
  return [
    ...text,
    '',
    'Waves:',
    ...waveTable(status.waves, counts),
    ...(analyses.length === 0 ? [] : ['', 'Analyses:', ...analyses]),
  ];
}

/**
 * What to do about a halt. A halt that quarantined the release would only halt again on resume
 * (`ReleaseQuarantined`): the quarantine is lifted first, by a person, on the AgentRelease.
 */
function nextSteps(view: RolloutView, quarantined: boolean, reason: string): [string, string][] {
  const effect =
    reason === 'AnalysisFailed' ? 'the halted wave goes on, its analysis from the start' : 'the halted wave goes on';
  const resume = `agent-upgrade rollout resume ${view.name} (${effect})`;
  if (!quarantined) return [['To resume', resume]];
  const release = shown(view.release);
  return [
    ['Quarantined', `${release} is quarantined by this halt: resuming now would halt again (ReleaseQuarantined)`],
    [
      'To resume',
      `once the failure is understood: agent-upgrade release unquarantine ${release} --reason "…", then ${resume}`,
    ],
  ];
}

/** Failures by reason and by node label, and the most recent of the bounded sample. */
function failureLines(failures: Json): [string, string][] {
  const tally = (counts: Json): string =>
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, count]) => `${printable(key)} ${shown(count)}`)
      .join(', ');
  const byReason = record(failures['byReason']);
  const byLabel = record(failures['byLabel']);
  const sample = Array.isArray(failures['sample']) ? failures['sample'].map(record) : [];
  const lines: [string, string][] = [];
  if (Object.keys(byReason).length > 0) lines.push(['Failures by reason', tally(byReason)]);
  if (Object.keys(byLabel).length > 0) lines.push(['Failures by label', tally(byLabel)]);
  const last = sample.at(-1);
  if (last !== undefined)
    lines.push([
      'Last failure',
      `${shown(last['machine'])} (${shown(last['operation'])}, wave ${shown(last['wave'])}) ` +
        `${shown(last['reason'])} at ${shown(last['at'])}: ${shown(last['message'])}`,
    ]);
  return lines;
}

/** One line per metric of each wave's analysis: its verdict, the counts and the last value. */
function analysisLines(waves: readonly WaveStatus[]): string[] {
  return waves.flatMap((wave) =>
    wave.analysis === undefined
      ? []
      : wave.analysis.metrics.map(
          (metric) =>
            `  ${shown(wave.name)} ${shown(metric.name)}: ${metric.phase}, ${metric.successful}/${metric.count} held, ` +
            `${metric.failed} failed, ${metric.errors} errors` +
            (metric.lastValue === undefined ? '' : `; last ${shown(metric.lastValue)} at ${shown(metric.lastAt)}`) +
            (metric.message === undefined || metric.message === '' ? '' : ` (${shown(metric.message)})`),
        ),
  );
}

/**
 * NAME, PHASE, SIZE, CURSOR/IN-FLIGHT, FAILURES (used/allowed), BAKING UNTIL. The status counts
 * operations in flight fleet-wide only: they are the Progressing wave's, so only its row shows them.
 */
function waveTable(waves: readonly WaveStatus[], counts: Json): string[] {
  const inFlight = shown(counts['inFlight']);
  const rows = [
    ['NAME', 'PHASE', 'SIZE', 'CURSOR/IN-FLIGHT', 'FAILURES', 'BAKING UNTIL'],
    ...waves.map((wave) => [
      shown(wave.name),
      wave.phase,
      String(wave.size),
      `${wave.cursor}/${wave.phase === 'Progressing' ? inFlight : '-'}`,
      `${wave.failureBudget.used}/${wave.failureBudget.allowed}`,
      shown(wave.bakeUntil),
    ]),
  ];
  return columns(rows);
}

/** One line saying what a state command did. */
export function renderChange(change: RolloutChange): string {
  const { from, to } = change;
  if (!change.changed) {
    const halt = from.resumeFromHalt === '' ? '' : ` (spec.resumeFromHalt ${from.resumeFromHalt})`;
    return `Rollout ${change.name}: spec.state is already ${shown(from.state)}${halt}; unchanged.`;
  }
  const parts = [
    ...(from.state === to.state ? [] : [`spec.state ${shown(from.state)} -> ${shown(to.state)}`]),
    ...(from.resumeFromHalt === to.resumeFromHalt ? [] : [`spec.resumeFromHalt -> ${to.resumeFromHalt}`]),
  ];
  return `Rollout ${change.name}: ${parts.join(', ')}. The controller acts on it at its next reconcile.`;
}

/** One line saying what `rollout approve` did. */
export function renderApproval(approval: RolloutApproval): string {
  if (!approval.changed)
    return `Rollout ${approval.name}: wave ${shown(approval.wave)} is already approved; unchanged.`;
  return (
    `Rollout ${approval.name}: wave ${approval.wave} approved. ` +
    "The next wave starts at the controller's next reconcile, once this one has baked."
  );
}
