import { spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { loadConfig } from '../../src/app/node/config/load-config.js';
import { checkConfigText, parseConfigText } from '../../src/app/node/config/parse-config.js';
import { makeScratch } from '../support/real-tree.js';

const BOUND_MS = 5_000;

function within<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${BOUND_MS} ms`)), BOUND_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const nestedObjects = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const nestedArrays = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('configuration text: nesting is bounded before anything recurses over it', () => {
  it.each([
    ['objects under an unknown key', `{"x":${nestedObjects(20_000)}}`],
    ['objects inside a section', `{"agent":${nestedObjects(20_000)}}`],
    ['arrays as an argument', `{"agent":{"args":[${nestedArrays(100_000)}]}}`],
    ['arrays at the top', nestedArrays(200_000)],
  ])('refuses %s with E_CONFIG instead of overflowing the stack', (_name, text) => {
    expect(parseConfigText(text, 'test')).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
  });

  it('counts only structure: brackets and escaped quotes inside strings do not nest', () => {
    const argument = `${'[{'.repeat(100)} \\" ${'[{'.repeat(100)}`;
    expect(checkConfigText(`{"agent":{"args":["${argument}"]}}`).ok).toBe(true);
  });

  it('accepts the deepest legitimate document (a key inside a section inside the file)', () => {
    expect(
      checkConfigText('{"agent":{"args":["agent","--config","/etc/a.json"]},"container":{"machines":["kube1"]}}').ok,
    ).toBe(true);
  });
});

describe('loading the configuration file', () => {
  let scratch: ReturnType<typeof makeScratch>;
  const fs = new NodeFileSystem();
  let path: string;
  beforeEach(() => {
    scratch = makeScratch();
    mkdirSync(join(scratch.root, 'etc/aks-flex-node'), { recursive: true });
    path = join(scratch.root, 'etc/aks-flex-node/agent-upgrade.json');
  });
  afterEach(() => {
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // Not a FIFO, or nobody blocked on it.
    }
    scratch.cleanup();
  });

  it.each([
    ['a FIFO', () => expect(spawnSync('mkfifo', [path]).status).toBe(0)],
    ['a link to /dev/zero', () => symlinkSync('/dev/zero', path)],
    ['over 1 MiB', () => writeFileSync(path, `{"agent":{"args":["${'a'.repeat(1024 * 1024)}"]}}`)],
    ['not UTF-8', () => writeFileSync(path, Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]))],
    ['nested 100 000 deep', () => writeFileSync(path, `{"x":${nestedObjects(100_000)}}`)],
  ])('refuses a configuration file that is %s with E_CONFIG, without blocking', async (_name, plant) => {
    plant();
    const loaded = await within(loadConfig(fs, { root: scratch.root }));
    expect(loaded).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
  });

  it.each([
    ['--root', { root: '/tmp/a\nb' }],
    ['--root', { root: '/tmp/a\u0085b' }],
    ['--config', { path: '/etc/a\rb.json' }],
  ])('refuses a control character in %s with E_USAGE', async (_name, source) => {
    expect(await loadConfig(fs, source)).toMatchObject({ ok: false, failure: { code: 'E_USAGE' } });
  });

  it('still follows a link to a regular configuration file', async () => {
    writeFileSync(join(scratch.root, 'real.json'), JSON.stringify({ service: { manager: 'none' } }));
    symlinkSync(join(scratch.root, 'real.json'), path);
    const loaded = await loadConfig(fs, { root: scratch.root });
    expect(loaded.ok && loaded.value.service.manager).toBe('none');
  });
});
