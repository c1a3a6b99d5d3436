/** `controller --config FILE`: the nodes' trust section, its defaults, and every refusal (E_CONFIG, naming keys). */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  checkControllerConfigText,
  CONTROLLER_CONFIG_DEFAULTS,
  CONTROLLER_TRUST_CACHE_DIR,
  loadControllerConfig,
  parseControllerConfigText,
} from '../../../src/app/fleet/controller/controller-config.js';
import { checkConfigValue } from '../../../src/app/node/config/parse-config.js';

const TRUST = {
  mode: 'tuf',
  rootFile: '/etc/agent-upgrade-controller/root.json',
  metadataUrl: 'https://releases.example/metadata/',
  targetsUrl: 'https://releases.example/targets/',
};
const parse = (value: unknown) => parseControllerConfigText(JSON.stringify(value), 'config.json');
const keysOf = (value: unknown): readonly string[] | null => {
  const check = checkControllerConfigText(JSON.stringify(value));
  return check.ok ? null : check.problem.keys;
};
const codeOf = (result: { ok: boolean; failure?: { code: string } }): string =>
  result.ok ? 'ok' : (result.failure?.code ?? '?');

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'controller-config-'));
  dirs.push(dir);
  return dir;
}

describe('the controller configuration', () => {
  it('fills the mirrors, its own cache directory and short metadata limits', () => {
    const parsed = parse({ trust: TRUST });
    expect(parsed.ok && parsed.value).toEqual({
      trust: { ...TRUST, mirrors: [], cacheDir: CONTROLLER_TRUST_CACHE_DIR },
      artifact: CONTROLLER_CONFIG_DEFAULTS.artifact,
    });
  });

  it('reads the same trust section as a node does', () => {
    const trust = { ...TRUST, mirrors: ['https://mirror.example/targets/'], cacheDir: '/var/cache/trust' };
    const controller = parse({ trust });
    const node = checkConfigValue({ trust });
    expect(controller.ok && controller.value.trust).toEqual(node.ok && node.config.trust);
  });

  it('without a trust section verifies nothing', () => {
    expect(parse({})).toEqual({ ok: true, value: CONTROLLER_CONFIG_DEFAULTS });
    const explicit = parse({ trust: null });
    expect(explicit.ok && explicit.value.trust).toBeNull();
  });

  it.each([
    ['a query in a base URL', { trust: { ...TRUST, targetsUrl: 'https://r.example/t/?sig=x' } }, ['trust.targetsUrl']],
    ['a relative root file', { trust: { ...TRUST, rootFile: 'root.json' } }, ['trust.rootFile']],
    ['a mode other than tuf', { trust: { ...TRUST, mode: 'gpg' } }, ['trust.mode']],
    ['a key it does not know', { trust: TRUST, paths: {} }, ['paths']],
    ['a timeout out of range', { trust: TRUST, artifact: { timeoutMs: 10 } }, ['artifact.timeoutMs']],
    [
      'plain-HTTP URLs while plain HTTP is off',
      { trust: { ...TRUST, metadataUrl: 'http://r.example/m/' }, artifact: { allowHttp: false } },
      ['trust.metadataUrl', 'artifact.allowHttp'],
    ],
    [
      'a root file inside the cache directory',
      { trust: { ...TRUST, cacheDir: '/etc/agent-upgrade-controller' } },
      ['trust.rootFile', 'trust.cacheDir'],
    ],
    [
      'a cache directory that is the root file',
      { trust: { ...TRUST, cacheDir: TRUST.rootFile } },
      ['trust.rootFile', 'trust.cacheDir'],
    ],
  ])('refuses %s: E_CONFIG, naming the keys', (_name, value, keys) => {
    expect(keysOf(value)).toEqual(keys);
    expect(codeOf(parse(value))).toBe('E_CONFIG');
  });

  it('refuses a trust section without its repository', () => {
    expect(keysOf({ trust: { mode: 'tuf' } })).not.toBeNull();
  });

  it('refuses text that is no JSON, or nests too deep', () => {
    expect(codeOf(parseControllerConfigText('{"trust":', 'config.json'))).toBe('E_CONFIG');
    expect(codeOf(parseControllerConfigText(`${'['.repeat(40)}${']'.repeat(40)}`, 'config.json'))).toBe('E_CONFIG');
  });
});

describe('loadControllerConfig', () => {
  it('reads a file; without --config the defaults', async () => {
    const file = join(scratch(), 'config.json');
    writeFileSync(file, JSON.stringify({ trust: TRUST }));
    const loaded = await loadControllerConfig(file);
    expect(loaded.ok && loaded.value.trust?.metadataUrl).toBe(TRUST.metadataUrl);
    expect(await loadControllerConfig(undefined)).toEqual({ ok: true, value: CONTROLLER_CONFIG_DEFAULTS });
  });

  it('a relative path is E_USAGE; a missing file, a directory or bytes that are not UTF-8 are E_CONFIG', async () => {
    const dir = scratch();
    const binary = join(dir, 'binary.json');
    writeFileSync(binary, Buffer.from([0x7b, 0xff, 0x7d]));
    expect(codeOf(await loadControllerConfig('config.json'))).toBe('E_USAGE');
    expect(codeOf(await loadControllerConfig(join(dir, 'missing.json')))).toBe('E_CONFIG');
    expect(codeOf(await loadControllerConfig(dir))).toBe('E_CONFIG');
    expect(codeOf(await loadControllerConfig(binary))).toBe('E_CONFIG');
  });
});
