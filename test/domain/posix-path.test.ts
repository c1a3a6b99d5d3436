import { describe, expect, it } from 'vitest';
import {
  basenamePath,
  dirnamePath,
  isAbsolutePath,
  isCleanAbsolutePath,
  isPathInside,
  joinPath,
  normalizePath,
  relativePath,
  rerootPath,
  resolveLinkTarget,
} from '../../src/domain/node/layout/posix-path.js';

describe('isAbsolutePath', () => {
  it.each([
    ['/', true],
    ['/usr/local/bin', true],
    ['//double', true],
    ['relative/path', false],
    ['./here', false],
    ['../up', false],
    ['', false],
    [' /leading-space', false],
  ])('%j → %s', (path, expected) => {
    expect(isAbsolutePath(path)).toBe(expected);
  });
});

describe('normalizePath', () => {
  it.each([
    ['/', '/'],
    ['//', '/'],
    ['///', '/'],
    ['/usr/local/bin', '/usr/local/bin'],
    ['/usr/local/bin/', '/usr/local/bin'],
    ['/usr//local///bin', '/usr/local/bin'],
    ['/usr/./local/.', '/usr/local'],
    ['/usr/local/../lib', '/usr/lib'],
    ['/usr/local/../../..', '/'],
    ['/..', '/'],
    ['/../etc', '/etc'],
    ['/../../etc/passwd', '/etc/passwd'],
    ['/a/b/c/../../d', '/a/d'],
    ['/a/./b/../c/', '/a/c'],
    ['/.hidden/..dots/...', '/.hidden/..dots/...'],
    ['', '.'],
    ['.', '.'],
    ['./', '.'],
    ['a', 'a'],
    ['a/', 'a'],
    ['a/b/..', 'a'],
    ['a/..', '.'],
    ['..', '..'],
    ['../..', '../..'],
    ['a/../..', '..'],
    ['../a/../b', '../b'],
    ['./a/./b', 'a/b'],
  ])('%j → %j', (path, expected) => {
    expect(normalizePath(path)).toBe(expected);
  });

  it.each(['/', '/a/b', 'a/b', '..', '../a', '/x/../../y/./z/'])('is idempotent for %j', (path) => {
    expect(normalizePath(normalizePath(path))).toBe(normalizePath(path));
  });
});

describe('isCleanAbsolutePath', () => {
  it.each([
    ['/', true],
    ['/usr/local/lib/aks-flex-node', true],
    ['/etc/aks-flex-node/agent-upgrade-state.json', true],
    ['/a/.hidden', true],
    ['/a/...', true],
    ['/with space/ok', true],
    ['', false],
    ['relative', false],
    ['./relative', false],
    ['/trailing/', false],
    ['//double', false],
    ['/a//b', false],
    ['/a/./b', false],
    ['/a/../b', false],
    ['/..', false],
    ['/.', false],
    ['/nul\0byte', false],
    ['/\0', false],
  ])('%j → %s', (path, expected) => {
    expect(isCleanAbsolutePath(path)).toBe(expected);
  });
});

describe('joinPath', () => {
  it.each<[readonly string[], string]>([
    [['/usr', 'local', 'bin'], '/usr/local/bin'],
    [['/usr/', '/local/', 'bin/'], '/usr/local/bin'],
    [['/', 'etc'], '/etc'],
    [['/a', '', 'b'], '/a/b'],
    [['/a', '..', 'b'], '/b'],
    [['/a', '../../..', 'b'], '/b'],
    [['/a', '.'], '/a'],
    [['/a', '/b'], '/a/b'],
    [['a', 'b'], 'a/b'],
    [['a', '..', '..'], '..'],
    [['', ''], '.'],
    [[], '.'],
  ])('%j → %j', (parts, expected) => {
    expect(joinPath(...parts)).toBe(expected);
  });
});

describe('dirnamePath', () => {
  it.each([
    ['/', '/'],
    ['/etc', '/'],
    ['/etc/', '/'],
    ['/usr/local/bin', '/usr/local'],
    ['/usr/local/bin/', '/usr/local'],
    ['/usr/local/../bin/x', '/usr/bin'],
    ['a/b', 'a'],
    ['a', '.'],
    ['', '.'],
  ])('%j → %j', (path, expected) => {
    expect(dirnamePath(path)).toBe(expected);
  });
});

describe('basenamePath', () => {
  it.each([
    ['/', '/'],
    ['/etc', 'etc'],
    ['/usr/local/bin/', 'bin'],
    ['/usr/local/aks-flex-node-blue', 'aks-flex-node-blue'],
    ['/a/b/..', 'a'],
    ['a/b', 'b'],
    ['a', 'a'],
    ['.hidden', '.hidden'],
  ])('%j → %j', (path, expected) => {
    expect(basenamePath(path)).toBe(expected);
  });
});

describe('relativePath', () => {
  it.each([
    ['/usr/local/lib/aks-flex-node', '/usr/local/lib/aks-flex-node/aks-flex-node-blue', 'aks-flex-node-blue'],
    [
      '/usr/local/bin',
      '/usr/local/lib/aks-flex-node/aks-flex-node-current',
      '../lib/aks-flex-node/aks-flex-node-current',
    ],
    ['/a/b/c', '/a/b/c', '.'],
    ['/a/b/c', '/a', '../..'],
    ['/a/b', '/x/y', '../../x/y'],
    ['/', '/etc/passwd', 'etc/passwd'],
    ['/etc', '/', '..'],
    ['/', '/', '.'],
    ['/a/b/', '/a/b/c/', 'c'],
    ['/a/./b/../b', '/a/c', '../c'],
    ['/ab', '/abc', '../abc'],
  ])('from %j to %j → %j', (from, to, expected) => {
    expect(relativePath(from, to)).toBe(expected);
  });

  it.each([
    ['/usr/local/bin', '/usr/local/lib/x/y'],
    ['/a/b/c', '/a/d'],
    ['/', '/a'],
    ['/a', '/'],
    ['/deep/one/two', '/deep/one/two/three'],
  ])('resolving relativePath(%j, %j) from the first directory gives the second', (from, to) => {
    expect(joinPath(from, relativePath(from, to))).toBe(normalizePath(to));
  });
});

describe('resolveLinkTarget', () => {
  it.each([
    ['/usr/local/lib/x/current', 'x-blue', '/usr/local/lib/x/x-blue'],
    ['/usr/local/lib/x/current', './x-green', '/usr/local/lib/x/x-green'],
    ['/usr/local/bin/agent', '../lib/x/current', '/usr/local/lib/x/current'],
    ['/usr/local/bin/agent', '/usr/local/lib/x/current', '/usr/local/lib/x/current'],
    ['/usr/local/bin/agent', '/usr//local/./lib/x/', '/usr/local/lib/x'],
    ['/a/link', '../../../../etc', '/etc'],
    ['/link', 'target', '/target'],
  ])('link %j → %j resolves to %j', (link, target, expected) => {
    expect(resolveLinkTarget(link, target)).toBe(expected);
  });
});

describe('isPathInside', () => {
  it.each([
    ['/', '/', true],
    ['/', '/etc', true],
    ['/', 'relative', false],
    ['/sandbox', '/sandbox', true],
    ['/sandbox', '/sandbox/', true],
    ['/sandbox/', '/sandbox/usr/bin', true],
    ['/sandbox', '/sandbox/a/../b', true],
    ['/sandbox', '/sandbox/../etc', false],
    ['/sandbox', '/sandbox2', false],
    ['/sandbox', '/sand', false],
    ['/sandbox', '/', false],
    ['/sandbox', '/etc', false],
    ['/a/b', '/a', false],
  ])('isPathInside(%j, %j) → %s', (ancestor, path, expected) => {
    expect(isPathInside(ancestor, path)).toBe(expected);
  });
});

describe('rerootPath', () => {
  it.each([
    ['/', '/usr/local/bin/aks-flex-node', '/usr/local/bin/aks-flex-node'],
    ['/', '/usr//local/./bin/', '/usr/local/bin'],
    ['/sandbox', '/usr/local/bin/aks-flex-node', '/sandbox/usr/local/bin/aks-flex-node'],
    ['/sandbox/', '/etc/x.json', '/sandbox/etc/x.json'],
    ['/sandbox', '/', '/sandbox'],
    ['/tmp/a b', '/run/x.lock', '/tmp/a b/run/x.lock'],
    // `..` stops at the host root: a re-rooted path never leaves the root.
    ['/sandbox', '/../etc/passwd', '/sandbox/etc/passwd'],
    ['/sandbox', '/usr/../../../etc', '/sandbox/etc'],
    ['/sandbox', 'relative/../../etc', '/sandbox/etc'],
    ['/', '/../etc', '/etc'],
    ['/', 'relative', '/relative'],
  ])('rerootPath(%j, %j) → %j', (root, path, expected) => {
    expect(rerootPath(root, path)).toBe(expected);
  });

  it.each(['/sandbox', '/tmp/x/y'])('every path re-rooted under %j stays inside it', (root) => {
    for (const path of ['/', '/..', '/../..', '/a/../../b', '..', '../../x', '/etc/../../../passwd']) {
      expect(isPathInside(root, rerootPath(root, path))).toBe(true);
    }
  });
});
