import { describe, expect, it } from 'vitest';
import {
  decodeReply,
  decodeRequest,
  encodeLine,
  TRY_RESTART_MAX_DELAY_MS,
} from '../../../src/adapters/node/supervisor/control-protocol.js';
import { StartLimit } from '../../../src/adapters/node/supervisor/start-limit.js';

describe('control protocol codec', () => {
  it('accepts every op in its documented shape', () => {
    expect(decodeRequest('{"op":"status"}')).toEqual({ ok: true, request: { op: 'status' } });
    expect(decodeRequest('{"op":"restart"}')).toEqual({ ok: true, request: { op: 'restart' } });
    expect(decodeRequest('{"op":"restart","resetFailed":true}')).toEqual({
      ok: true,
      request: { op: 'restart', resetFailed: true },
    });
    expect(decodeRequest('{"op":"try-restart","delayMs":2000}')).toEqual({
      ok: true,
      request: { op: 'try-restart', delayMs: 2000 },
    });
    expect(decodeRequest('{"op":"stop"}')).toEqual({ ok: true, request: { op: 'stop' } });
    expect(decodeRequest('{"op":"start"}')).toEqual({ ok: true, request: { op: 'start' } });
  });

  it.each([
    ['not JSON', '{op:status}', 'bad-request'],
    ['an array', '[]', 'bad-request'],
    ['no op', '{}', 'bad-request'],
    ['an unknown op', '{"op":"reload"}', 'unknown-op'],
    ['a misspelt field', '{"op":"restart","resetfailed":true}', 'bad-request'],
    ['a non-boolean resetFailed', '{"op":"restart","resetFailed":"yes"}', 'bad-request'],
    ['a try-restart without a delay', '{"op":"try-restart"}', 'bad-request'],
    ['a fractional delay', '{"op":"try-restart","delayMs":1.5}', 'bad-request'],
    ['a delay over the maximum', `{"op":"try-restart","delayMs":${TRY_RESTART_MAX_DELAY_MS + 1}}`, 'bad-request'],
  ])('refuses %s', (_name, line, code) => {
    expect(decodeRequest(line)).toMatchObject({ ok: false, error: { code } });
  });

  it('round-trips replies and rejects replies of another shape', () => {
    const status = { ok: true, state: 'activating', mainPid: null, failureHook: 'running' } as const;
    expect(decodeReply('status', encodeLine(status))).toEqual(status);
    // A supervisor of an earlier version does not say whether its hook runs.
    const earlier = { ok: true, state: 'active', mainPid: 7 } as const;
    expect(decodeReply('status', encodeLine(earlier))).toEqual(earlier);
    expect(decodeReply('status', '{"ok":true,"state":"active","mainPid":7,"failureHook":"maybe"}')).toBeNull();
    expect(decodeReply('status', '{"ok":true,"state":"active","mainPid":0}')).toBeNull();
    expect(decodeReply('restart', '{"ok":true,"state":"active","mainPid":5}')).toBeNull();
    expect(decodeReply('restart', '{"ok":true,"restarted":false}')).toEqual({ ok: true, restarted: false });
    expect(decodeReply('stop', '{"ok":false,"error":{"code":"stop-failed","message":"m"}}')).toEqual({
      ok: false,
      error: { code: 'stop-failed', message: 'm' },
    });
    expect(decodeReply('stop', '{"ok":false,"error":{"code":"mystery","message":"m"}}')).toBeNull();
    expect(decodeReply('try-restart', 'garbage')).toBeNull();
  });
});

describe('StartLimit', () => {
  it('refuses the start after the burst within the interval, and allows it once the oldest start left it', () => {
    const limit = new StartLimit(3, 1000);
    expect([0, 100, 200].map((nowMs) => limit.tryStart(nowMs))).toEqual([true, true, true]);
    expect(limit.tryStart(999)).toBe(false);
    expect(limit.tryStart(1000)).toBe(true);
  });

  it('forgets counted starts on reset', () => {
    const limit = new StartLimit(1, 1000);
    expect(limit.tryStart(0)).toBe(true);
    expect(limit.tryStart(1)).toBe(false);
    limit.reset();
    expect(limit.tryStart(2)).toBe(true);
  });

  it('is disabled by an interval of 0, as in systemd', () => {
    const limit = new StartLimit(1, 0);
    expect([0, 0, 0].map((nowMs) => limit.tryStart(nowMs))).toEqual([true, true, true]);
  });
});
