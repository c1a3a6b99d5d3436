import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  quoteExecArgument,
  recoveryTimeoutSec,
  renderAgentUnit,
  renderRecoveryScript,
  renderRecoveryUnit,
  shellQuote,
  type UnitSettings,
} from '../../../src/adapters/node/systemd/render-units.js';
import { systemdAssets } from '../../../src/app/node/composition/service-platform.module.js';
import { FLEX_PROFILE } from '../../../src/app/node/config/profiles.js';
import { deriveLayout } from '../../../src/domain/node/layout/slot-layout.js';
import { makeScratch, makeSymlink, writeExecutable } from '../../support/real-tree.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/**
 * verify also runs man(1) for every man: URI in Documentation=: with the repository's man
 * directory on MANPATH it proves the page the units name exists and is found.
 */
const VERIFY_ENV = { ...process.env, MANPATH: join(REPO, 'man') };

describe('systemd unit rendering', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let settings: UnitSettings;
  beforeEach(() => {
    scratch = makeScratch();
    writeExecutable(join(scratch.root, 'slots/agent-blue'), '#!/bin/sh\nexit 0\n');
    makeSymlink(join(scratch.root, 'slots/agent-current'), 'agent-blue');
    writeExecutable(join(scratch.root, 'slots/recovery.sh'), '#!/bin/sh\nexit 0\n', 0o750);
    settings = {
      description: 'AKS Flex Node agent',
      agentName: 'aks-flex-node',
      unit: 'aks-flex-node-agent.service',
      recoveryUnit: 'aks-flex-node-agent-recovery.service',
      currentLink: join(scratch.root, 'slots/agent-current'),
      args: ['agent', '--config', '/etc/aks flex/config "main".json', '--label=$HOME%d'],
      restartSec: 30,
      startLimitBurst: 5,
      startLimitIntervalSec: 300,
      recoveryScript: join(scratch.root, 'slots/recovery.sh'),
      healthTimeoutMs: 30_000,
    };
  });
  afterEach(() => scratch.cleanup());

  it('passes `systemd-analyze verify` without a single warning, for both units', () => {
    const agent = join(scratch.root, settings.unit);
    const recovery = join(scratch.root, settings.recoveryUnit);
    writeFileSync(agent, renderAgentUnit(settings));
    writeFileSync(recovery, renderRecoveryUnit(settings));
    const run = spawnSync('systemd-analyze', ['verify', agent, recovery], { encoding: 'utf8', env: VERIFY_ENV });
    expect({ status: run.status, stderr: run.stderr, stdout: run.stdout }).toEqual({
      status: 0,
      stderr: '',
      stdout: '',
    });
  });

  it('runs the current link with the configured arguments, restarts on failure and names its recovery unit', () => {
    const text = renderAgentUnit(settings);
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        `ExecStart=${settings.currentLink} agent --config "/etc/aks flex/config \\"main\\".json" "--label=$$HOME%%d"`,
        'Restart=on-failure',
        'RestartSec=30',
        'OnFailure=aks-flex-node-agent-recovery.service',
        'StartLimitBurst=5',
        'StartLimitIntervalSec=300',
      ]),
    );
  });

  it('runs as Type=exec, tags its journal lines with the agent name and names its documentation', () => {
    expect(renderAgentUnit(settings).split('\n')).toEqual(
      expect.arrayContaining(['Type=exec', 'SyslogIdentifier=aks-flex-node', 'Documentation=man:agent-upgrade(8)']),
    );
    expect(
      renderAgentUnit(settings)
        .split('\n')
        .filter((line) => line.startsWith('Type=')),
    ).toEqual(['Type=exec']);
  });

  it.each([
    [30_000, 180],
    [12_000, 126],
    [1_001, 94],
  ])(
    'bounds the recovery unit: health timeout %s ms gives TimeoutStartSec=%s (3 × timeout + stop + margin)',
    (healthTimeoutMs, seconds) => {
      expect(recoveryTimeoutSec(healthTimeoutMs)).toBe(seconds);
      const lines = renderRecoveryUnit({ ...settings, healthTimeoutMs }).split('\n');
      expect(lines).toEqual(
        expect.arrayContaining(['Type=oneshot', `TimeoutStartSec=${seconds}`, 'Documentation=man:agent-upgrade(8)']),
      );
    },
  );

  it.each([
    ['plain', 'agent', 'agent'],
    ['a space', 'a b', '"a b"'],
    ['a quote and a backslash', 'a"b\\c', '"a\\"b\\\\c"'],
    ['a dollar and a percent', '$x%y', '"$$x%%y"'],
  ])('quotes an ExecStart argument with %s', (_name, argument, quoted) => {
    expect(quoteExecArgument(argument)).toBe(quoted);
  });

  it('shell-quotes single quotes', () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });
});

describe('the units as the systemd platform composes them from configuration', () => {
  it("tag the agent's journal lines with agent.name and bound the recovery unit by health.timeoutMs", () => {
    const config = { ...FLEX_PROFILE, health: { ...FLEX_PROFILE.health, timeoutMs: 12_000 } };
    const layout = deriveLayout({ root: '/', agentName: config.agent.name, ...config.paths });
    if (!layout.ok) throw new Error(layout.failure.message);
    const [agent, recovery] = systemdAssets(config, layout.value, { euid: 0, arch: 'amd64', pid: 1, command: 'test' });
    expect(agent?.text.split('\n')).toContain(`SyslogIdentifier=${config.agent.name}`);
    expect(recovery?.text.split('\n')).toContain(`TimeoutStartSec=${recoveryTimeoutSec(12_000)}`);
  });
});

describe('the shipped daemon unit (deploy/agent-upgrade-daemon.service)', () => {
  const text = readFileSync(join(REPO, 'deploy/agent-upgrade-daemon.service'), 'utf8');
  const EXEC_START = 'ExecStart=/usr/local/bin/agent-upgrade daemon --log-level info';

  it('runs the daemon as Type=exec with the memory flag, restarts on failure but not on a configuration error', () => {
    expect(text.split('\n')).toEqual(
      expect.arrayContaining([
        EXEC_START,
        'Type=exec',
        'Environment=NODE_OPTIONS=--max-semi-space-size=2',
        'Restart=on-failure',
        'RestartPreventExitStatus=2',
        'Documentation=man:agent-upgrade(8)',
      ]),
    );
  });

  it('passes `systemd-analyze verify` without a single warning', () => {
    // verify requires ExecStart's program to exist: only that path is moved into the scratch dir.
    const scratch = makeScratch();
    try {
      const program = join(scratch.root, 'bin/agent-upgrade');
      writeExecutable(program, '#!/bin/sh\nexit 0\n');
      expect(text.split('\n').filter((line) => line === EXEC_START)).toHaveLength(1);
      const unit = join(scratch.root, 'agent-upgrade-daemon.service');
      writeFileSync(unit, text.replace(EXEC_START, `ExecStart=${program} daemon --log-level info`));
      const run = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8', env: VERIFY_ENV });
      expect({ status: run.status, stderr: run.stderr, stdout: run.stdout }).toEqual({
        status: 0,
        stderr: '',
        stdout: '',
      });
    } finally {
      scratch.cleanup();
    }
  });
});

describe('recovery script', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let log: string;
  let record: string;
  beforeEach(() => {
    scratch = makeScratch();
    log = join(scratch.root, 'calls.log');
    record = join(scratch.root, 'record.json');
    // Stand-ins for systemctl and the last-good binary that only log how they were called.
    // is-failed answers as UNIT_FAILED_EXIT says (0: the unit is failed).
    writeExecutable(
      join(scratch.root, 'bin/systemctl'),
      `#!/bin/sh\necho "systemctl $*" >> '${log}'\n[ "$1" = is-failed ] && exit \${UNIT_FAILED_EXIT:-0}\nexit 0\n`,
    );
    writeExecutable(
      join(scratch.root, 'slots/agent-blue'),
      `#!/bin/sh\necho "last-good $*" >> '${log}'\nexit \${RECOVER_EXIT:-0}\n`,
    );
    makeSymlink(join(scratch.root, 'slots/agent-last-good'), 'agent-blue');
  });
  afterEach(() => scratch.cleanup());

  const run = (env: Record<string, string> = {}) => {
    const script = join(scratch.root, 'recovery.sh');
    writeFileSync(
      script,
      renderRecoveryScript({
        unit: 'agent.service',
        record,
        lastGoodLink: join(scratch.root, 'slots/agent-last-good'),
        recoverWith: 'last-good',
        recoverOptions: ['--root', '/tmp/a root'],
        message: "upgraded agent failed; it's restored",
      }),
    );
    chmodSync(script, 0o750);
    return spawnSync(script, [], {
      encoding: 'utf8',
      env: { PATH: `${join(scratch.root, 'bin')}:/usr/bin:/bin`, ...env },
    });
  };
  const calls = (): string[] => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []);

  it('does nothing without a pending upgrade record', () => {
    expect(run().status).toBe(0);
    expect(calls()).toEqual([]);
  });

  it('runs last-good recover, then reset-failed and a non-blocking restart; twice is harmless', () => {
    writeFileSync(record, '{}');
    expect(run().status).toBe(0);
    expect(run().status).toBe(0);
    const once = [
      'systemctl is-failed --quiet -- agent.service',
      "last-good recover --message upgraded agent failed; it's restored --root /tmp/a root",
      'systemctl is-failed --quiet -- agent.service',
      'systemctl reset-failed agent.service',
      'systemctl --no-block restart agent.service',
    ];
    expect(calls()).toEqual([...once, ...once]);
  });

  it('leaves a unit that runs again alone: recover restarted it, or it was started since it failed', () => {
    writeFileSync(record, '{}');
    expect(run({ UNIT_FAILED_EXIT: '1' }).status).toBe(0);
    expect(calls()).toEqual([
      'systemctl is-failed --quiet -- agent.service',
      "last-good recover --message upgraded agent failed; it's restored --root /tmp/a root",
      'systemctl is-failed --quiet -- agent.service',
    ]);
  });

  it("passes systemd's failed run to recover when it names one", () => {
    writeFileSync(record, '{}');
    expect(run({ MONITOR_INVOCATION_ID: '0123456789abcdef0123456789abcdef' }).status).toBe(0);
    expect(calls()[1]).toBe(
      "last-good recover --message upgraded agent failed; it's restored --root /tmp/a root --failed-run 0123456789abcdef0123456789abcdef",
    );
  });

  it('names no failed run while systemd still restarts the unit on its own (not failed)', () => {
    writeFileSync(record, '{}');
    expect(run({ MONITOR_INVOCATION_ID: '0123456789abcdef0123456789abcdef', UNIT_FAILED_EXIT: '1' }).status).toBe(0);
    expect(calls()[1]).toBe("last-good recover --message upgraded agent failed; it's restored --root /tmp/a root");
  });

  it('keeps going when recover fails and exits with its status', () => {
    writeFileSync(record, '{}');
    const result = run({ RECOVER_EXIT: '7' });
    expect(result.status).toBe(7);
    expect(calls()).toHaveLength(5);
  });
});
