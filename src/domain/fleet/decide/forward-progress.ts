import type { Availability } from './availability.js';
import type { Machine } from '../order/fleet.js';
import type { ForwardLedger, WaveLedger } from './forward-ledger.js';
import { remainingOf } from './halt-rules.js';
import { formatTimestamp, parseTimestamp } from '../spec/time-text.js';
import type { AnalysisStatus } from '../status/rollout-status.js';
import { MAX_PENDING_CREATES } from '../spec/rollout-vocabulary.js';

/**
 * The gates after the halting ones, wave by wave. A wave starts (startedAt, WaveStarted) when the
 * window is open; it dispatches as many machines as its slots, the fleet-wide cap and the
 * announcement bound allow; it is complete when it dispatched its share and nothing of it still
 * runs within its timeout. Then a closed window, its manual gate, its bake and its analysis hold
 * the next wave.
 */

export interface WaveTimes {
  readonly startedAt?: string;
  readonly completedAt?: string;
  readonly bakeUntil?: string;
  /** Dispatched, finished and baked: the next wave may start. */
  readonly done?: boolean;
}

export interface ForwardProgress {
  readonly phase: 'WaitingForWindow' | 'AwaitingApproval' | 'Baking' | 'Progressing' | 'Succeeded';
  readonly current: WaveLedger | null;
  readonly times: ReadonlyMap<string, WaveTimes>;
  /** The wave that may create now: its announced creates are kept, `picks` are added. */
  readonly dispatch: { readonly wave: WaveLedger; readonly picks: readonly Machine[] } | null;
  readonly requeueAtMs: number | null;
}

export interface GateInputs {
  readonly ledger: ForwardLedger;
  readonly availability: Availability;
  readonly windowOpen: boolean;
  /** The wave named by the approval annotation. */
  readonly approvedWave: string;
  /** The baking waves' analyses (analysis-run.ts): a wave bakes until its analysis succeeded. */
  readonly analyses: ReadonlyMap<string, AnalysisStatus>;
  readonly nowMs: number;
}

export function advanceForward(inputs: GateInputs): ForwardProgress {
  const { ledger, windowOpen, nowMs } = inputs;
  const times = new Map<string, WaveTimes>();
  const stop = (phase: ForwardProgress['phase'], current: WaveLedger | null, requeueAtMs: number | null = null) => ({
    phase,
    current,
    times,
    dispatch: null,
    requeueAtMs,
  });
  for (const [index, wave] of ledger.waves.entries()) {
    const before = wave.previous;
    if (before?.phase === 'Completed') continue;
    let startedAt = before?.startedAt;
    if (startedAt === undefined) {
      if (!windowOpen) return stop('WaitingForWindow', wave);
      startedAt = formatTimestamp(nowMs);
      times.set(wave.spec.name, { startedAt });
    }
    let completedAt = before?.completedAt;
    let bakeUntil = before?.bakeUntil;
    if (completedAt === undefined) {
      if (remainingOf(wave, ledger) > 0) {
        if (!windowOpen) return stop('WaitingForWindow', wave);
        return { phase: 'Progressing', current: wave, times, dispatch: dispatchOf(wave, inputs), requeueAtMs: null };
      }
      if (wave.running > 0) {
        return { phase: 'Progressing', current: wave, times, dispatch: { wave, picks: [] }, requeueAtMs: null };
      }
      completedAt = formatTimestamp(nowMs);
      bakeUntil = formatTimestamp(nowMs + wave.spec.bakeMs);
    }
    const finished = { startedAt, completedAt, ...(bakeUntil !== undefined && { bakeUntil }) };
    times.set(wave.spec.name, finished);
    const gate = closingGate(wave, index < ledger.waves.length - 1, inputs, parseTimestamp(bakeUntil) ?? nowMs);
    if (gate !== null) return stop(gate.phase, wave, gate.requeueAtMs);
    times.set(wave.spec.name, { ...finished, done: true });
  }
  return stop('Succeeded', null);
}

/**
 * What holds a finished wave before the next one starts, in order: a closed window (nothing new
 * starts outside it), the wave's manual gate (the annotation names the wave once a person has
 * looked at its result), and its bake. An approval may come while the wave still bakes.
 */
function closingGate(
  wave: WaveLedger,
  hasNext: boolean,
  inputs: GateInputs,
  bakeUntilMs: number,
): { phase: 'WaitingForWindow' | 'AwaitingApproval' | 'Baking'; requeueAtMs: number | null } | null {
  if (hasNext && !inputs.windowOpen) return { phase: 'WaitingForWindow', requeueAtMs: null };
  if (wave.spec.gate === 'Manual' && inputs.approvedWave !== wave.spec.name) {
    return { phase: 'AwaitingApproval', requeueAtMs: inputs.nowMs < bakeUntilMs ? bakeUntilMs : null };
  }
  if (inputs.nowMs < bakeUntilMs) return { phase: 'Baking', requeueAtMs: bakeUntilMs };
  // The planner is asked again when a measurement is due (plan-rollout.ts), not here.
  if (wave.spec.analysis !== null && inputs.analyses.get(wave.spec.name)?.phase !== 'Successful')
    return { phase: 'Baking', requeueAtMs: null };
  return null;
}

function dispatchOf(wave: WaveLedger, inputs: GateInputs): { wave: WaveLedger; picks: Machine[] } {
  const room = Math.min(
    wave.maxInFlight - wave.slots,
    inputs.availability.room,
    remainingOf(wave, inputs.ledger),
    MAX_PENDING_CREATES - wave.announced.length,
  );
  return { wave, picks: room <= 0 ? [] : wave.candidates.slice(0, room) };
}
