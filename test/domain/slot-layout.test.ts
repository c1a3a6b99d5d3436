import { describe, expect, it } from 'vitest';
import { isPathInside } from '../../src/domain/node/layout/posix-path.js';
import {
  BINARY_MODE,
  deriveLayout,
  FILE_ROLES,
  identity,
  PATH_ROLES,
  RECORD_MODE,
  RECOVERY_SCRIPT_MODE,
  SLOT_DIR_MODE,
  slotAt,
  slotPath,
  validateCanonicalLayout,
  type CanonicalPaths,
  type LayoutSettings,
  type PathRole,
} from '../../src/domain/node/layout/slot-layout.js';
import { canonicalWith, FLEX_PATHS, FLEX_SETTINGS, flexLayout, unwrap } from './layout-fixtures.js';

/** The private staging temps the layout derives (named like temps of the blue slot and of the entry). */
const FLEX_STAGING = {
  downloadStaging: '/usr/local/lib/aks-flex-node/.aks-flex-node-blue.tmp-download',
  legacyDownloadStaging: '/usr/local/bin/.aks-flex-node.tmp-download',
  candidateSnapshot: '/usr/local/lib/aks-flex-node/.aks-flex-node-blue.tmp-candidate',
} as const;

const SETTINGS_PATH_KEYS = ['entry', 'slotDir', 'record', 'state', 'lock', 'daemonState', 'unitDir'] as const;

function codeOf(settings: LayoutSettings): string | null {
  const result = deriveLayout(settings);
  return result.ok ? null : result.failure.code;
}

describe('deriveLayout: flex defaults', () => {
  const layout = flexLayout();

  it('keeps the production root', () => {
    expect(layout.root).toBe('/');
  });

  it.each(PATH_ROLES.map((role) => [role, FLEX_PATHS[role]] as const))(
    '%s is the flex profile path %s',
    (role, expected) => {
      expect(layout[role]).toBe(expected);
    },
  );

  it('returns exactly the flex profile layout', () => {
    expect(layout).toEqual({ root: '/', ...FLEX_PATHS, ...FLEX_STAGING });
  });

  it('has the documented modes', () => {
    expect([SLOT_DIR_MODE, BINARY_MODE, RECORD_MODE, RECOVERY_SCRIPT_MODE]).toEqual([0o750, 0o755, 0o600, 0o750]);
  });

  it('role lists cover every path of the layout exactly once', () => {
    expect(new Set(PATH_ROLES).size).toBe(PATH_ROLES.length);
    expect([...PATH_ROLES].sort()).toEqual(Object.keys(FLEX_PATHS).sort());
    expect(FILE_ROLES.every((role) => (PATH_ROLES as readonly string[]).includes(role))).toBe(true);
  });
});

describe('deriveLayout: --root re-rooting', () => {
  it.each(['/tmp/sandbox', '/var/lib/agent-upgrade/demo', '/r'])('root %s puts every path under the root', (root) => {
    const layout = flexLayout(root);
    expect(layout.root).toBe(root);
    for (const role of PATH_ROLES) {
      expect(layout[role]).toBe(`${root}${FLEX_PATHS[role]}`);
      expect(isPathInside(root, layout[role])).toBe(true);
      expect(layout[role]).not.toBe(root);
    }
    for (const [field, path] of Object.entries(FLEX_STAGING))
      expect(layout[field as keyof typeof FLEX_STAGING]).toBe(`${root}${path}`);
  });

  it('derives slot names from the agent name under a root', () => {
    const layout = unwrap(
      deriveLayout({ ...FLEX_SETTINGS, root: '/sb', agentName: 'my.agent_2', slotDir: '/opt/slots' }),
    );
    expect([layout.slotDir, layout.blue, layout.green, layout.current, layout.lastGood, layout.recoveryScript]).toEqual(
      [
        '/sb/opt/slots',
        '/sb/opt/slots/my.agent_2-blue',
        '/sb/opt/slots/my.agent_2-green',
        '/sb/opt/slots/my.agent_2-current',
        '/sb/opt/slots/my.agent_2-last-good',
        '/sb/opt/slots/my.agent_2-recovery.sh',
      ],
    );
    expect([layout.downloadStaging, layout.candidateSnapshot, layout.legacyDownloadStaging]).toEqual([
      '/sb/opt/slots/.my.agent_2-blue.tmp-download',
      '/sb/opt/slots/.my.agent_2-blue.tmp-candidate',
      '/sb/usr/local/bin/.aks-flex-node.tmp-download',
    ]);
  });
});

describe('deriveLayout: agent name', () => {
  it.each([
    ['a', null],
    ['A9', null],
    ['agent_1.2-x', null],
    ['a'.repeat(64), null],
    ['', 'E_LAYOUT'],
    ['a'.repeat(65), 'E_LAYOUT'],
    ['-agent', 'E_LAYOUT'],
    ['.agent', 'E_LAYOUT'],
    ['_agent', 'E_LAYOUT'],
    ['.', 'E_LAYOUT'],
    ['..', 'E_LAYOUT'],
    ['a/b', 'E_LAYOUT'],
    ['../etc', 'E_LAYOUT'],
    ['a b', 'E_LAYOUT'],
    ['agent\n', 'E_LAYOUT'],
    ['agent\0', 'E_LAYOUT'],
    ['agent*', 'E_LAYOUT'],
    ['agént', 'E_LAYOUT'],
  ])('%j → %s', (agentName, expected) => {
    expect(codeOf({ ...FLEX_SETTINGS, agentName })).toBe(expected);
  });
});

const BAD_PATHS: readonly (readonly [string, string])[] = [
  ['empty', ''],
  ['relative', 'usr/local/bin/x'],
  ['dot-relative', './x'],
  ['parent-relative', '../x'],
  ['trailing slash', '/usr/local/x/'],
  ['double slash', '/usr//local/x'],
  ['dot segment', '/usr/./local/x'],
  ['.. segment', '/usr/local/../../etc/x'],
  ['.. climbing above /', '/../x'],
  ['only ..', '/..'],
  ['NUL byte', '/usr/local/x\0y'],
  ['the root directory', '/'],
  ['double-slash root', '//'],
];

describe('deriveLayout: host paths', () => {
  it.each(SETTINGS_PATH_KEYS.flatMap((key) => BAD_PATHS.map(([label, path]) => [key, label, path] as const)))(
    'paths.%s %s (%j) → E_LAYOUT',
    (key, _label, path) => {
      expect(codeOf({ ...FLEX_SETTINGS, [key]: path })).toBe('E_LAYOUT');
      expect(codeOf({ ...FLEX_SETTINGS, root: '/sb', [key]: path })).toBe('E_LAYOUT');
    },
  );

  it.each(BAD_PATHS.filter(([, path]) => path !== '/'))('root %s (%j) → E_LAYOUT', (_label, root) => {
    expect(codeOf({ ...FLEX_SETTINGS, root })).toBe('E_LAYOUT');
  });

  it.each([['/'], ['/sb'], ['/tmp/a b/sandbox']])('root %j is accepted', (root) => {
    expect(codeOf({ ...FLEX_SETTINGS, root })).toBeNull();
  });
});

describe('deriveLayout: every role distinct', () => {
  const slotDir = FLEX_SETTINGS.slotDir;
  it.each([
    ['record == state', { state: FLEX_SETTINGS.record }],
    ['lock == entry', { lock: FLEX_SETTINGS.entry }],
    ['record == lock', { lock: FLEX_SETTINGS.record }],
    ['state == daemonState', { daemonState: FLEX_SETTINGS.state }],
    ['entry == record', { record: FLEX_SETTINGS.entry }],
    ['entry == slotDir', { entry: slotDir }],
    ['slotDir == unitDir', { unitDir: slotDir }],
    ['record == unitDir', { record: FLEX_SETTINGS.unitDir }],
    ['lock == slotDir', { lock: slotDir }],
    ['daemonState == slotDir', { daemonState: slotDir }],
    ['entry == blue slot', { entry: `${slotDir}/aks-flex-node-blue` }],
    ['entry == green slot', { entry: `${slotDir}/aks-flex-node-green` }],
    ['entry == current link', { entry: `${slotDir}/aks-flex-node-current` }],
    ['record == last-good link', { record: `${slotDir}/aks-flex-node-last-good` }],
    ['state == recovery script', { state: `${slotDir}/aks-flex-node-recovery.sh` }],
    ['lock == current link', { lock: `${slotDir}/aks-flex-node-current` }],
    ['daemonState == blue slot', { daemonState: `${slotDir}/aks-flex-node-blue` }],
    ['unitDir == blue slot', { unitDir: `${slotDir}/aks-flex-node-blue` }],
  ] as const)('%s → E_LAYOUT', (_label, overrides: Partial<LayoutSettings>) => {
    expect(codeOf({ ...FLEX_SETTINGS, ...overrides })).toBe('E_LAYOUT');
    expect(codeOf({ ...FLEX_SETTINGS, root: '/sb', ...overrides })).toBe('E_LAYOUT');
  });

  it.each([
    ['entry next to the slots', { entry: `${slotDir}/aks-flex-node` }],
    ['record and state in different directories, same name', { record: '/etc/a/x.json', state: '/etc/b/x.json' }],
    ['a custom unit directory', { unitDir: '/usr/lib/systemd/system' }],
  ] as const)('%s is accepted', (_label, overrides: Partial<LayoutSettings>) => {
    expect(codeOf({ ...FLEX_SETTINGS, ...overrides })).toBeNull();
  });
});

describe('deriveLayout: the unit directory belongs to the service manager', () => {
  it.each([
    ['the record is a unit file', { record: '/etc/systemd/system/aks-flex-node-agent.service' }],
    ['the state file is inside the unit directory', { state: '/etc/systemd/system/state.json' }],
    ['the entry is inside the unit directory', { entry: '/etc/systemd/system/aks-flex-node' }],
    ['the slot directory is inside the unit directory', { slotDir: '/etc/systemd/system/slots' }],
    ['the unit directory is inside the slot directory', { unitDir: '/usr/local/lib/aks-flex-node/units' }],
  ])('%s → E_LAYOUT', (_label, overrides) => {
    expect(codeOf({ ...FLEX_SETTINGS, ...overrides })).toBe('E_LAYOUT');
    expect(codeOf({ ...FLEX_SETTINGS, root: '/sb', ...overrides })).toBe('E_LAYOUT');
  });

  it('a record next to the unit directory is fine', () => {
    expect(codeOf({ ...FLEX_SETTINGS, record: '/etc/systemd/record.json' })).toBeNull();
  });
});

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
