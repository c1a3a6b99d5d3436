import { describe, expect, it } from 'vitest';
import { checkConfigValue, parseConfigValue } from '../../src/app/node/config/parse-config.js';

const TRUST = {
  mode: 'tuf',
  rootFile: '/etc/aks-flex-node/trust/root.json',
  metadataUrl: 'https://releases.example/metadata/',
  targetsUrl: 'https://releases.example/targets/',
};
const keysOf = (value: unknown): readonly string[] | null => {
  const check = checkConfigValue(value);
  return check.ok ? null : check.problem.keys;
};

describe('configuration: trust', () => {
  it('is off by default', () => {
    const parsed = parseConfigValue({}, 'test');
    expect(parsed.ok && parsed.value.trust).toBeNull();
    const explicit = parseConfigValue({ trust: null }, 'test');
    expect(explicit.ok && explicit.value.trust).toBeNull();
  });

  it('fills the mirrors and keeps the trusted metadata beside the state file by default', () => {
    const parsed = parseConfigValue({ trust: TRUST }, 'test');
    expect(parsed.ok && parsed.value.trust).toEqual({
      ...TRUST,
      mirrors: [],
      cacheDir: '/etc/aks-flex-node/agent-upgrade-trust',
    });
  });

  it.each([
    ['a query', { targetsUrl: 'https://releases.example/targets/?sig=x' }, 'trust.targetsUrl'],
    ['user information', { metadataUrl: 'https://user:pw@releases.example/metadata/' }, 'trust.metadataUrl'],
    ['no trailing slash', { targetsUrl: 'https://releases.example/targets' }, 'trust.targetsUrl'],
    ['another scheme', { metadataUrl: 'ftp://releases.example/metadata/' }, 'trust.metadataUrl'],
    ['a relative root file', { rootFile: 'root.json' }, 'trust.rootFile'],
    ['a mode other than tuf', { mode: 'gpg' }, 'trust.mode'],
    ['a bad mirror', { mirrors: ['https://mirror.example/t'] }, 'trust.mirrors[0]'],
  ])('refuses %s (E_CONFIG), naming the key', (_name, change, key) => {
    expect(keysOf({ trust: { ...TRUST, ...change } })).toEqual([key]);
    expect(parseConfigValue({ trust: { ...TRUST, ...change } }, 'test')).toMatchObject({
      ok: false,
      failure: { code: 'E_CONFIG' },
    });
  });

  it('refuses a trust section without its repository', () => {
    expect(keysOf({ trust: { mode: 'tuf' } })).not.toBeNull();
  });

  it('refuses plain-HTTP repository URLs while artifact.allowHttp is false, naming them', () => {
    const trust = { ...TRUST, metadataUrl: 'http://releases.example/metadata/' };
    expect(keysOf({ trust, artifact: { allowHttp: false } })).toEqual(['trust.metadataUrl', 'artifact.allowHttp']);
    expect(keysOf({ trust, artifact: { allowHttp: true } })).toBeNull();
  });

  it('refuses a cache directory that is another configured path', () => {
    expect(keysOf({ trust: { ...TRUST, cacheDir: '/usr/local/lib/aks-flex-node' } })).toEqual([
      'paths.slotDir',
      'trust.cacheDir',
    ]);
  });
});
