/**
 * The supervisor's control protocol: one newline-terminated JSON request per connection over a
 * Unix socket, answered by one JSON line. Pure types and codec, shared by the supervisor (the
 * server) and SupervisorServiceManager (the client), so both sides validate the same shapes.
 */

/** The systemd ActiveStates the supervisor models; 'activating' covers the restart delay. */
export const SUPERVISOR_STATES = ['activating', 'active', 'inactive', 'failed'] as const;
export type SupervisorState = (typeof SUPERVISOR_STATES)[number];

/** A request line longer than this is refused: the protocol's requests are tiny. */
export const REQUEST_MAX_BYTES = 4096;

/** Replies are tiny too; a longer one means the peer is not a supervisor. */
export const REPLY_MAX_BYTES = 65536;

/** The longest delay a try-restart may ask for, so a typo cannot park a restart for days. */
export const TRY_RESTART_MAX_DELAY_MS = 3_600_000;

export type ControlRequest =
  | { readonly op: 'status' }
  | { readonly op: 'restart'; readonly resetFailed?: boolean }
  | { readonly op: 'try-restart'; readonly delayMs: number }
  | { readonly op: 'stop' }
  | { readonly op: 'start' };

export type ControlOp = ControlRequest['op'];

export type ControlErrorCode =
  'bad-request' | 'unknown-op' | 'request-too-large' | 'start-limit-hit' | 'stop-failed' | 'shutting-down' | 'internal';

export interface ControlFailure {
  readonly ok: false;
  readonly error: { readonly code: ControlErrorCode; readonly message: string };
}

export interface StatusReply {
  readonly ok: true;
  readonly state: SupervisorState;
  readonly mainPid: number | null;
  /**
   * Whether the on-failure hook still runs. Absent from a supervisor of an earlier version, which
   * a newer CLI may well be talking to in the middle of an upgrade.
   */
  readonly failureHook?: 'running' | 'idle';
  /**
   * Automatic restarts of the agent since the last manual start or reset, and the supervisor run
   * the count belongs to. Absent from a supervisor of an earlier version, as `failureHook`.
   */
  readonly restarts?: number;
  readonly runId?: string;
}

export interface RestartReply {
  readonly ok: true;
  readonly restarted: boolean;
}

export interface TryRestartReply {
  readonly ok: true;
  readonly scheduled: true;
}

export interface StopReply {
  readonly ok: true;
  readonly stopped: boolean;
}

export interface StartReply {
  readonly ok: true;
  readonly started: boolean;
}

/** The successful reply each op gets. */
export interface ReplyFor {
  readonly status: StatusReply;
  readonly restart: RestartReply;
  readonly 'try-restart': TryRestartReply;
  readonly stop: StopReply;
  readonly start: StartReply;
}

export type ControlReply = ReplyFor[ControlOp] | ControlFailure;

export function controlFailure(code: ControlErrorCode, message: string): ControlFailure {
  return { ok: false, error: { code, message } };
}

/** One protocol message as a line on the wire. */
export function encodeLine(message: ControlRequest | ControlReply): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Parses and validates one request line. Unknown fields are refused rather than ignored, so a
 * misspelt `resetFailed` fails loudly instead of restarting without the reset.
 */
export function decodeRequest(line: string): { readonly ok: true; readonly request: ControlRequest } | ControlFailure {
  const value = parseJson(line);
  if (!isRecord(value)) return controlFailure('bad-request', 'the request is not a JSON object');
  const op = value['op'];
  if (typeof op !== 'string') return controlFailure('bad-request', 'the request has no "op" string');
  switch (op) {
    case 'status':
    case 'stop':
    case 'start':
      return onlyFields(value, ['op']) ? { ok: true, request: { op } } : unexpectedFields(op);
    case 'restart': {
      if (!onlyFields(value, ['op', 'resetFailed'])) return unexpectedFields(op);
      const resetFailed = value['resetFailed'];
      if (resetFailed === undefined) return { ok: true, request: { op } };
      if (typeof resetFailed !== 'boolean') return controlFailure('bad-request', '"resetFailed" must be a boolean');
      return { ok: true, request: { op, resetFailed } };
    }
    case 'try-restart': {
      if (!onlyFields(value, ['op', 'delayMs'])) return unexpectedFields(op);
      const delayMs = value['delayMs'];
      if (
        typeof delayMs !== 'number' ||
        !Number.isInteger(delayMs) ||
        delayMs < 0 ||
        delayMs > TRY_RESTART_MAX_DELAY_MS
      ) {
        return controlFailure('bad-request', `"delayMs" must be an integer from 0 to ${TRY_RESTART_MAX_DELAY_MS}`);
      }
      return { ok: true, request: { op, delayMs } };
    }
    default:
      return controlFailure('unknown-op', `unknown op ${JSON.stringify(op.slice(0, 64))}`);
  }
}

/**
 * Parses the reply to a request with `op`. Returns `null` when the line is not a reply of that
 * op's shape (the peer is not a supervisor, or speaks another version).
 */
export function decodeReply<Op extends ControlOp>(op: Op, line: string): ReplyFor[Op] | ControlFailure | null {
  const value = parseJson(line);
  if (!isRecord(value)) return null;
  if (value['ok'] === false) return decodeFailure(value);
  if (value['ok'] !== true) return null;
  // Each branch checks the shape of ReplyFor[Op]; TypeScript cannot narrow a generic by `op`.
  return (isReplyShape(op, value) ? value : null) as ReplyFor[Op] | null;
}

function isReplyShape(op: ControlOp, value: Readonly<Record<string, unknown>>): boolean {
  switch (op) {
    case 'status': {
      const mainPid = value['mainPid'];
      const failureHook = value['failureHook'];
      const restarts = value['restarts'];
      const runId = value['runId'];
      return (
        isState(value['state']) &&
        (mainPid === null || (typeof mainPid === 'number' && Number.isInteger(mainPid) && mainPid > 0)) &&
        (failureHook === undefined || failureHook === 'running' || failureHook === 'idle') &&
        (restarts === undefined || (typeof restarts === 'number' && Number.isSafeInteger(restarts) && restarts >= 0)) &&
        (runId === undefined || (typeof runId === 'string' && /^[0-9a-f-]{36}$/.test(runId)))
      );
    }
    case 'restart':
      return typeof value['restarted'] === 'boolean';
    case 'try-restart':
      return value['scheduled'] === true;
    case 'stop':
      return typeof value['stopped'] === 'boolean';
    case 'start':
      return typeof value['started'] === 'boolean';
  }
}

const ERROR_CODES: readonly ControlErrorCode[] = [
  'bad-request',
  'unknown-op',
  'request-too-large',
  'start-limit-hit',
  'stop-failed',
  'shutting-down',
  'internal',
];

function decodeFailure(value: Readonly<Record<string, unknown>>): ControlFailure | null {
  const error = value['error'];
  if (!isRecord(error)) return null;
  const code = error['code'];
  const message = error['message'];
  if (typeof message !== 'string' || !isErrorCode(code)) return null;
  return controlFailure(code, message);
}

function isErrorCode(value: unknown): value is ControlErrorCode {
  return ERROR_CODES.some((code) => code === value);
}

function isState(value: unknown): value is SupervisorState {
  return SUPERVISOR_STATES.some((state) => state === value);
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function onlyFields(value: Readonly<Record<string, unknown>>, allowed: readonly string[]): boolean {
  return Object.keys(value).every((key) => allowed.includes(key));
}

function unexpectedFields(op: string): ControlFailure {
  return controlFailure('bad-request', `unexpected fields for op ${op}`);
}
