import { isSha256, type Sha256 } from '../../common/digest.js';
import { fail, ok, type Result } from '../../common/failure.js';
import { invariant } from '../../common/invariant.js';
import { isSlotName, type SlotName } from '../layout/slot.js';
import { parseEnvelope } from './json-envelope.js';

/**
 * The watch window (docs/protocol.md#watch-window): after the health gate passed, the candidate
 * must stay healthy for `health.watchMs` before its upgrade is decided. The window's progress is
 * a document of its own, beside the record and the marker, rather than a key of either: after a
 * rollback the previous binary — possibly a release that never heard of windows — reads the
 * record and the marker strictly, and must still find them as it knows them.
 *
 * Progress is durable and measured as a duration: each process adds the monotonic time it
 * watched, so a wall-clock step changes no verdict and a restart continues where the last
 * checkpoint left off. `startedAt` is only for people.
 */
export const WATCH_WINDOW_KIND = 'AgentWatchWindow';
export const WATCH_WINDOW_SCHEMA_VERSION = 1;
export const WATCH_TEXT_MAX_BYTES = 4096;
/** The longest window a configuration may ask for: a day. */
export const WATCH_WINDOW_MAX_MS = 24 * 60 * 60 * 1000;
/** Checkpoints per window: a crash costs at most a tenth of the window's progress. */
export const WATCH_CHECKPOINTS = 10;
/** The shortest slice between checkpoints, so a short window is not all record writes. */
export const WATCH_SLICE_MIN_MS = 1000;

/** Which path's verdict the window delays: the upgrade record's, or the activation marker's. */
export type WatchOwner = 'managed' | 'direct';

export interface WatchWindow {
  readonly kind: typeof WATCH_WINDOW_KIND;
  readonly schemaVersion: typeof WATCH_WINDOW_SCHEMA_VERSION;
  readonly owner: WatchOwner;
  readonly candidate: SlotName;
  readonly candidateDigest: Sha256;
  readonly windowMs: number;
  /** How long the candidate was watched healthy so far, added up over every process. */
  readonly watchedMs: number;
  /** Wall time the window opened (ISO 8601), for status output only: never compared. */
  readonly startedAt: string;
  /**
   * The lifetime the restart count belongs to — systemd's count lives until the next boot, the
   * supervisor's until it restarts — or null when the manager keeps no count.
   */
  readonly restartEpoch: string | null;
  /**
   * The service manager's count of automatic restarts of the agent when the window opened (or
   * the count's lifetime began); more later means the candidate crashed inside the window.
   */
  readonly restartsAtStart: number | null;
}

export interface NewWatchInput {
  readonly owner: WatchOwner;
  readonly candidate: SlotName;
  readonly candidateDigest: Sha256;
  readonly windowMs: number;
  readonly startedAt: string;
  readonly restartEpoch: string | null;
  readonly restartsAtStart: number | null;
}

export function newWatchWindow(input: NewWatchInput): WatchWindow {
  const window: WatchWindow = {
    kind: WATCH_WINDOW_KIND,
    schemaVersion: WATCH_WINDOW_SCHEMA_VERSION,
    ...input,
    watchedMs: 0,
  };
  const problem = watchProblem(window);
  invariant(problem === null, `a new watch window is valid: ${problem ?? ''}`);
  return window;
}

/** Adds `elapsedMs` of healthy watching, never past the window's end. */
export function withWatched(window: WatchWindow, elapsedMs: number): WatchWindow {
  invariant(Number.isInteger(elapsedMs) && elapsedMs >= 0, 'watched time is a whole, non-negative duration');
  return { ...window, watchedMs: Math.min(window.windowMs, window.watchedMs + elapsedMs) };
}

/** A new restart baseline, after a reboot (or a manual start) reset the service manager's count. */
export function withRestartBaseline(
  window: WatchWindow,
  restartEpoch: string | null,
  restarts: number | null,
): WatchWindow {
  return { ...window, restartEpoch, restartsAtStart: restarts };
}

export function watchRemainingMs(window: WatchWindow): number {
  return window.windowMs - window.watchedMs;
}

/** How long to watch before the next checkpoint. */
export function watchSliceMs(window: WatchWindow): number {
  const sliceMs = Math.max(WATCH_SLICE_MIN_MS, Math.ceil(window.windowMs / WATCH_CHECKPOINTS));
  return Math.min(sliceMs, watchRemainingMs(window));
}

/** The service manager's count of automatic restarts now, and the lifetime it belongs to. */
export interface RestartObservation {
  readonly restartEpoch: string | null;
  readonly restarts: number | null;
}

/**
 * Whether the agent was restarted automatically since the window opened: the service manager
 * restarts on its own only a process that failed, so that is a crash inside the window. A planned
 * restart (an operator's, a daemon's hand-over) and a reboot are not counted.
 */
export function crashedInWindow(window: WatchWindow, now: RestartObservation): boolean {
  return (
    window.restartEpoch !== null &&
    now.restartEpoch === window.restartEpoch &&
    window.restartsAtStart !== null &&
    now.restarts !== null &&
    now.restarts > window.restartsAtStart
  );
}

/**
 * Whether the count must be taken again: it belongs to another lifetime, there was none, or it went
 * down — a manual start and `reset-failed` zero systemd's count, so a lower count is no crash, and
 * later crashes must be counted from it.
 */
export function needsRestartBaseline(window: WatchWindow, now: RestartObservation): boolean {
  if (now.restartEpoch !== window.restartEpoch) return true;
  if (now.restarts === null) return false;
  return window.restartsAtStart === null || now.restarts < window.restartsAtStart;
}

/** The next thing a window needs, on either path. */
export type WindowStep =
  | { readonly kind: 'open' }
  | { readonly kind: 'crashed' }
  | { readonly kind: 'rebase' }
  | { readonly kind: 'watch'; readonly sliceMs: number }
  | { readonly kind: 'over' };

/**
 * One row of the window (docs/protocol.md#watch-window) for the candidate's own window (`null`:
 * none yet): open it, fail a crash inside it, take the restart count again after a reboot, watch
 * the next slice, or — all of it watched — it is over.
 */
export function nextWindowStep(window: WatchWindow | null, now: RestartObservation): WindowStep {
  if (window === null) return { kind: 'open' };
  if (crashedInWindow(window, now)) return { kind: 'crashed' };
  if (needsRestartBaseline(window, now)) return { kind: 'rebase' };
  return window.watchedMs >= window.windowMs ? { kind: 'over' } : { kind: 'watch', sliceMs: watchSliceMs(window) };
}

export function serializeWatch(window: WatchWindow): string {
  const canonical = {
    kind: window.kind,
    schemaVersion: window.schemaVersion,
    owner: window.owner,
    candidate: window.candidate,
    candidateDigest: window.candidateDigest,
    windowMs: window.windowMs,
    watchedMs: window.watchedMs,
    startedAt: window.startedAt,
    restartEpoch: window.restartEpoch,
    restartsAtStart: window.restartsAtStart,
  };
  return `${JSON.stringify(canonical, null, 2)}\n`;
}

const WATCH_KEYS = [
  'kind',
  'schemaVersion',
  'owner',
  'candidate',
  'candidateDigest',
  'windowMs',
  'watchedMs',
  'startedAt',
  'restartEpoch',
  'restartsAtStart',
] as const;

/** Strict parse; every problem is `E_RECORD`, as for the record and the marker. */
export function parseWatch(text: string): Result<WatchWindow> {
  const envelope = parseEnvelope(text, {
    what: 'the watch window',
    where: 'watch',
    code: 'E_RECORD',
    kind: WATCH_WINDOW_KIND,
    schemaVersion: WATCH_WINDOW_SCHEMA_VERSION,
    maxLength: WATCH_TEXT_MAX_BYTES,
    keys: WATCH_KEYS,
  });
  if (!envelope.ok) return envelope;
  const window = envelope.value as unknown as WatchWindow;
  const problem = watchProblem(window);
  return problem === null ? ok(window) : fail('E_RECORD', problem);
}

function watchProblem(window: WatchWindow): string | null {
  if (window.owner !== 'managed' && window.owner !== 'direct') return 'watch.owner must be "managed" or "direct"';
  if (!isSlotName(window.candidate)) return 'watch.candidate must be "blue" or "green"';
  if (!isSha256(window.candidateDigest)) return 'watch.candidateDigest must be a SHA-256 digest';
  if (!isDuration(window.windowMs) || window.windowMs === 0 || window.windowMs > WATCH_WINDOW_MAX_MS)
    return 'watch.windowMs must be a whole number of milliseconds from 1 to a day';
  if (!isDuration(window.watchedMs) || window.watchedMs > window.windowMs)
    return 'watch.watchedMs must be a whole number of milliseconds within the window';
  if (typeof window.startedAt !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/.test(window.startedAt))
    return 'watch.startedAt must be an ISO 8601 UTC time';
  if (
    window.restartEpoch !== null &&
    (typeof window.restartEpoch !== 'string' || !/^[0-9A-Za-z:._-]{1,64}$/.test(window.restartEpoch))
  )
    return 'watch.restartEpoch must be a short identifier or null';
  if (window.restartsAtStart !== null && !isDuration(window.restartsAtStart))
    return 'watch.restartsAtStart must be a whole, non-negative number or null';
  return null;
}

function isDuration(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
