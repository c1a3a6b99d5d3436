import { describe, expect, it } from 'vitest';
import { isPathInside } from '../../src/domain/node/layout/posix-path.js';
import {
  BINARY_MODE,
  deriveLayout,
  FILE_ROLES,
  PATH_ROLES,
  RECORD_MODE,
  RECOVERY_SCRIPT_MODE,
  SLOT_DIR_MODE,
  type LayoutSettings,
} from '../../src/domain/node/layout/slot-layout.js';
import { FLEX_PATHS, FLEX_SETTINGS, flexLayout, unwrap } from './layout-fixtures.js';

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
