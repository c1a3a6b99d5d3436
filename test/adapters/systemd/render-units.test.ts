import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { quoteExecArgument, renderAgentUnit, renderRecoveryScript, renderRecoveryUnit, shellQuote, type UnitSettings } from '../../../src/adapters/systemd/render-units.js';
import { makeScratch, makeSymlink, writeExecutable } from '../../support/real-tree.js';

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
      unit: 'aks-flex-node-agent.service',
      recoveryUnit: 'aks-flex-node-agent-recovery.service',
      currentLink: join(scratch.root, 'slots/agent-current'),
      args: ['agent', '--config', '/etc/aks flex/config "main".json', '--label=$HOME%d'],
      restartSec: 30,
      startLimitBurst: 5,
      startLimitIntervalSec: 300,
      recoveryScript: join(scratch.root, 'slots/recovery.sh'),
    };
  });
  afterEach(() => scratch.cleanup());

  it('passes `systemd-analyze verify` without a single warning, for both units', () => {
    const agent = join(scratch.root, settings.unit);
    const recovery = join(scratch.root, settings.recoveryUnit);
    writeFileSync(agent, renderAgentUnit(settings));
    writeFileSync(recovery, renderRecoveryUnit(settings));
    const run = spawnSync('systemd-analyze', ['verify', agent, recovery], { encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr, stdout: run.stdout }).toEqual({ status: 0, stderr: '', stdout: '' });
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

describe('recovery script', () => {
  let scratch: ReturnType<typeof makeScratch>;
  let log: string;
  let record: string;
  beforeEach(() => {
    scratch = makeScratch();
    log = join(scratch.root, 'calls.log');
    record = join(scratch.root, 'record.json');
    // Stand-ins for systemctl and the last-good binary that only log how they were called.
    writeExecutable(join(scratch.root, 'bin/systemctl'), `#!/bin/sh\necho "systemctl $*" >> '${log}'\n`);
    writeExecutable(join(scratch.root, 'slots/agent-blue'), `#!/bin/sh\necho "last-good $*" >> '${log}'\nexit \${RECOVER_EXIT:-0}\n`);
    makeSymlink(join(scratch.root, 'slots/agent-last-good'), 'agent-blue');
  });
  afterEach(() => scratch.cleanup());

  const run = (env: Record<string, string> = {}) => {
    const script = join(scratch.root, 'recovery.sh');
    writeFileSync(
      script,
      renderRecoveryScript({ unit: 'agent.service', record, lastGoodLink: join(scratch.root, 'slots/agent-last-good'), recoverWith: 'last-good', recoverOptions: ['--root', '/tmp/a root'], message: "upgraded agent failed; it's restored" }),
    );
    chmodSync(script, 0o750);
    return spawnSync(script, [], { encoding: 'utf8', env: { PATH: `${join(scratch.root, 'bin')}:/usr/bin:/bin`, ...env } });
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
    const once = ["last-good recover --message upgraded agent failed; it's restored --root /tmp/a root", 'systemctl reset-failed agent.service', 'systemctl --no-block restart agent.service'];
    expect(calls()).toEqual([...once, ...once]);
  });

  it('keeps going when recover fails and exits with its status', () => {
    writeFileSync(record, '{}');
    const result = run({ RECOVER_EXIT: '7' });
    expect(result.status).toBe(7);
    expect(calls()).toHaveLength(3);
  });
});
