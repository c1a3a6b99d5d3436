import { describe, expect, it } from 'vitest';
import {
  identity,
  PATH_ROLES,
  slotAt,
  slotPath,
  validateCanonicalLayout,
  type CanonicalPaths,
  type LayoutSettings,
  type PathRole,
} from '../../src/domain/node/layout/slot-layout.js';
import { flexLayout } from './layout-fixtures.js';
import { canonicalWith } from './layout-host-model.js';

describe('identity, slotPath, slotAt', () => {
  const layout = flexLayout('/sb');

  it('identity maps every role to its own path', () => {
    const canonical = identity(layout);
    expect(Object.keys(canonical).sort()).toEqual([...PATH_ROLES].sort());
    for (const role of PATH_ROLES) expect(canonical[role]).toBe(layout[role]);
  });

  it.each([
    ['blue', '/sb/usr/local/lib/aks-flex-node/aks-flex-node-blue'],
    ['green', '/sb/usr/local/lib/aks-flex-node/aks-flex-node-green'],
  ] as const)('slotPath(%s) → %s', (slot, expected) => {
    expect(slotPath(layout, slot)).toBe(expected);
  });

  const aliased: CanonicalPaths = {
    ...identity(layout),
    blue: '/sb/real/aks-flex-node-blue',
    green: '/sb/real/aks-flex-node-green',
  };
  it.each([
    ['null', identity(layout), null, null],
    ['the blue slot', identity(layout), layout.blue, 'blue'],
    ['the green slot', identity(layout), layout.green, 'green'],
    ['the current link', identity(layout), layout.current, null],
    ['the entry', identity(layout), layout.entry, null],
    ['an outside file', identity(layout), '/opt/agent', null],
    ['the canonical blue', aliased, '/sb/real/aks-flex-node-blue', 'blue'],
    ['the canonical green', aliased, '/sb/real/aks-flex-node-green', 'green'],
    ['the raw blue when canonical differs', aliased, layout.blue, null],
    ['a blue path with a trailing slash', identity(layout), `${layout.blue}/`, null],
  ] as const)('slotAt(%s)', (_label, canonical, realPath, expected) => {
    expect(slotAt(canonical, realPath)).toBe(expected);
  });
});

describe('validateCanonicalLayout', () => {
  it.each([['/'], ['/sb']])('canonical == raw (root %s) → ok', (root) => {
    const layout = flexLayout(root);
    expect(validateCanonicalLayout(layout, identity(layout))).toEqual({ ok: true, value: layout });
  });

  type Case = readonly [
    label: string,
    root: string,
    overrides: Partial<LayoutSettings>,
    aliases: Record<string, string>,
  ];
  const rooted = (root: string, path: string): string => (root === '/' ? path : `${root}${path}`);

  const aliasCases = (root: string): Case[] => [
    // /etc/b → /etc/a: the state file is the record.
    [
      'record aliases state',
      root,
      { record: '/etc/a/signal.json', state: '/etc/b/signal.json' },
      { [rooted(root, '/etc/b')]: rooted(root, '/etc/a') },
    ],
    // /usr/local/lib → /usr/local/bin: the slot directory is the compatibility entry.
    ['slot directory aliases entry', root, {}, { [rooted(root, '/usr/local/lib')]: rooted(root, '/usr/local/bin') }],
    // /run/x → /etc/x: the lock is the record.
    [
      'lock aliases record',
      root,
      { lock: '/run/x/agent.lock', record: '/etc/x/agent.lock' },
      { [rooted(root, '/run/x')]: rooted(root, '/etc/x') },
    ],
    // /usr/local/bin → slot dir: the entry is the current link.
    [
      'entry aliases current link',
      root,
      { entry: '/usr/local/bin/aks-flex-node-current' },
      { [rooted(root, '/usr/local/bin')]: rooted(root, '/usr/local/lib/aks-flex-node') },
    ],
    // /etc/aks-flex-node → /run: the state file is the lock (through a chain of two aliases).
    [
      'state aliases lock through two hops',
      root,
      { state: '/etc/aks-flex-node/aks-flex-node-agent-upgrade.lock' },
      {
        [rooted(root, '/etc/aks-flex-node')]: rooted(root, '/var/tmp'),
        [rooted(root, '/var/tmp')]: rooted(root, '/run'),
      },
    ],
    // /etc/systemd → /usr/local/lib/aks-flex-node/..: unit directory aliases slot directory.
    [
      'unit directory aliases slot directory',
      root,
      { unitDir: '/etc/systemd/aks-flex-node' },
      { [rooted(root, '/etc/systemd')]: rooted(root, '/usr/local/lib') },
    ],
  ];

  it.each([...aliasCases('/'), ...aliasCases('/sb')])('%s (root %s) → E_LAYOUT', (_label, root, overrides, aliases) => {
    const layout = flexLayout(root, overrides);
    const canonical = canonicalWith(layout, aliases);
    // The raw paths are all distinct; only the canonical ones collide.
    expect(new Set(PATH_ROLES.map((role) => layout[role])).size).toBe(PATH_ROLES.length);
    expect(new Set(PATH_ROLES.map((role) => canonical[role])).size).toBeLessThan(PATH_ROLES.length);
    const result = validateCanonicalLayout(layout, canonical);
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });

  it.each([
    ['slot directory parent leads out of the root', { '/sb/usr/local/lib': '/usr/local/lib' }],
    ['record directory leads out of the root', { '/sb/etc/aks-flex-node': '/etc/aks-flex-node' }],
    ['lock directory leads to a sibling with the root as prefix', { '/sb/run': '/sb-evil/run' }],
    ['unit directory parent leads out of the root', { '/sb/etc/systemd': '/etc/systemd' }],
    ['entry directory leads out of the root', { '/sb/usr/local/bin': '/usr/local/bin' }],
    ['the whole usr tree leads out of the root', { '/sb/usr': '/usr' }],
  ])('sandbox: %s → E_LAYOUT', (_label, aliases) => {
    const layout = flexLayout('/sb');
    const result = validateCanonicalLayout(layout, canonicalWith(layout, aliases));
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });

  it.each(PATH_ROLES)('sandbox: only %s resolving outside the root → E_LAYOUT', (role: PathRole) => {
    const layout = flexLayout('/sb');
    const canonical: CanonicalPaths = { ...identity(layout), [role]: `/elsewhere/${role}` };
    const result = validateCanonicalLayout(layout, canonical);
    expect(result.ok ? null : result.failure.code).toBe('E_LAYOUT');
  });

  it.each([
    [
      'production root: aliases leading anywhere',
      '/',
      { '/usr/local/lib': '/opt/lib', '/etc/aks-flex-node': '/data/etc' },
    ],
    ['sandbox: an alias that stays inside the root', '/sb', { '/sb/usr/local/lib': '/sb/opt/lib' }],
    ['sandbox: alias to the root itself', '/sb', { '/sb/etc/aks-flex-node': '/sb' }],
  ])('%s (distinct) → ok', (_label, root, aliases) => {
    const layout = flexLayout(root);
    expect(validateCanonicalLayout(layout, canonicalWith(layout, aliases))).toEqual({ ok: true, value: layout });
  });
});
