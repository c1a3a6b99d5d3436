import { describe, expect, it } from 'vitest';
import { locateTarget, signedDownloadUrl } from '../../../src/domain/common/trust/target-path.js';

const BASES = ['https://releases.example/agent/targets/', 'https://mirror.example/t/'];
const SHA = 'a'.repeat(64);

describe('locateTarget', () => {
  it.each([
    ['https://releases.example/agent/targets/v2/agent.tar.gz', BASES[0], 'v2/agent.tar.gz'],
    ['https://mirror.example/t/v2/agent.tar.gz?sv=2024&sig=SECRET', BASES[1], 'v2/agent.tar.gz'],
    ['https://releases.example/agent/targets/v2/agent%20one.tar.gz', BASES[0], 'v2/agent one.tar.gz'],
    // Dot segments resolve as the HTTP client resolves them: the target is the file fetched.
    ['https://releases.example/agent/targets/v1/%2E%2E/v2/agent.tar.gz', BASES[0], 'v2/agent.tar.gz'],
  ])('%s names target %s under %s', (url, base, targetPath) => {
    expect(locateTarget(url, BASES)).toEqual({ ok: true, value: { base, targetPath } });
  });

  it.each([
    ['another host', 'https://evil.example/agent/targets/v2/agent.tar.gz'],
    ['another scheme', 'http://releases.example/agent/targets/v2/agent.tar.gz'],
    ['another port', 'https://releases.example:8443/agent/targets/v2/agent.tar.gz'],
    ['beside the base', 'https://releases.example/agent/targets-old/agent.tar.gz'],
    ['above the base', 'https://releases.example/agent/agent.tar.gz'],
  ])('refuses a URL on %s: E_UNTRUSTED', (_name, url) => {
    const located = locateTarget(url, BASES);
    expect(located.ok ? null : located.failure.code).toBe('E_UNTRUSTED');
  });

  it.each([
    ['the base itself', 'https://releases.example/agent/targets/'],
    ['an empty segment', 'https://releases.example/agent/targets/v2//agent.tar.gz'],
    ['an escaped slash', 'https://releases.example/agent/targets/v2%2Fagent.tar.gz'],
    ['an escaped dot-dot that leaves the base', 'https://releases.example/agent/targets/%2E%2E/other/x'],
    ['a bad escape', 'https://releases.example/agent/targets/v2/%E0%A4%A.tar.gz'],
  ])('refuses %s: E_UNTRUSTED, naming no URL', (_name, url) => {
    const located = locateTarget(url, BASES);
    expect(located.ok ? null : located.failure.code).toBe('E_UNTRUSTED');
    expect(located.ok ? '' : located.failure.message).not.toContain('releases.example');
  });

  it('refuses what is no URL at all: E_INVALID_URL', () => {
    const located = locateTarget('not a url', BASES);
    expect(located.ok ? null : located.failure.code).toBe('E_INVALID_URL');
  });
});

describe('signedDownloadUrl', () => {
  it('prefixes the file name with its digest under consistent snapshots, keeping the query', () => {
    expect(signedDownloadUrl('https://mirror.example/t/v2/agent.tar.gz?sig=S', SHA, true)).toBe(
      `https://mirror.example/t/v2/${SHA}.agent.tar.gz?sig=S`,
    );
  });

  it('leaves the URL alone without them', () => {
    expect(signedDownloadUrl('https://mirror.example/t/v2/agent.tar.gz', SHA, false)).toBe(
      'https://mirror.example/t/v2/agent.tar.gz',
    );
  });
});
