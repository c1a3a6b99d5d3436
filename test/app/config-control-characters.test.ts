import { describe, expect, it } from 'vitest';
import {
  quoteExecArgument,
  renderAgentUnit,
  renderRecoveryScript,
  renderRecoveryUnit,
  shellQuote,
  type RecoveryScriptSettings,
  type UnitSettings,
} from '../../src/adapters/node/systemd/render-units.js';
import { checkConfigValue, parseConfigValue } from '../../src/app/node/config/parse-config.js';
import { InvariantViolation } from '../../src/domain/common/invariant.js';

/** Characters that must never reach a unit, a script or a path. */
const CONTROLS: ReadonlyArray<readonly [string, string]> = [
  ['LF', '\n'],
  ['CR', '\r'],
  ['TAB', '\t'],
  ['NUL', '\u0000'],
  ['ESC', '\u001b'],
  ['DEL', '\u007f'],
  ['NEL (C1)', '\u0085'],
  ['CSI (C1)', '\u009b'],
  ['a lone surrogate', '\ud800'],
];

/** Every string key rendered into a unit, a script or a path, with how to set it. */
const PATH_KEYS: ReadonlyArray<readonly [string, (value: string) => unknown]> = [
  ['root', (value) => ({ root: value })],
  ['paths.entry', (value) => ({ paths: { entry: value } })],
  ['paths.slotDir', (value) => ({ paths: { slotDir: value } })],
  ['paths.record', (value) => ({ paths: { record: value } })],
  ['paths.state', (value) => ({ paths: { state: value } })],
  ['paths.lock', (value) => ({ paths: { lock: value } })],
  ['paths.daemonState', (value) => ({ paths: { daemonState: value } })],
  ['paths.unitDir', (value) => ({ paths: { unitDir: value } })],
  ['service.supervisorSocket', (value) => ({ service: { supervisorSocket: value } })],
  ['container.machinesDir', (value) => ({ container: { machinesDir: value } })],
  ['container.binaryPath', (value) => ({ container: { binaryPath: value } })],
  ['cluster.kubeconfig', (value) => ({ cluster: { kubeconfig: value } })],
];

const keysOf = (value: unknown): readonly string[] | null => {
  const check = checkConfigValue(value);
  return check.ok ? null : check.problem.keys;
};

describe('configuration refuses control characters, naming the key', () => {
  it.each(CONTROLS)('refuses %s in agent.args, naming agent.args[2] (E_CONFIG)', (_name, control) => {
    const config = { agent: { args: ['agent', '--config', `/etc/agent${control}ExecStartPre=/bin/touch /tmp/owned`] } };
    expect(keysOf(config)).toEqual(['agent.args[2]']);
    expect(parseConfigValue(config, 'test')).toMatchObject({ ok: false, failure: { code: 'E_CONFIG' } });
  });

  it.each(PATH_KEYS)('refuses a newline in %s, naming it', (key, set) => {
    expect(keysOf(set(`/etc/a\nb`))).toEqual([key]);
  });

  it.each(CONTROLS)('refuses %s in a path (paths.record)', (_name, control) => {
    expect(keysOf({ paths: { record: `/etc/a${control}b.json` } })).toEqual(['paths.record']);
  });

  it('accepts printable non-ASCII text: accents, a no-break space, a character outside the BMP', () => {
    const check = checkConfigValue({
      agent: { args: ['--label=café', 'a\u00a0b', 'emoji 🚀'] },
      paths: { state: '/etc/état/state.json' },
    });
    expect(check.ok).toBe(true);
  });
});

describe('the unit renderer refuses control characters instead of writing a changed unit', () => {
  const unit: UnitSettings = {
    description: 'agent',
    unit: 'agent.service',
    recoveryUnit: 'agent-recovery.service',
    currentLink: '/usr/local/lib/agent/agent-current',
    args: ['agent'],
    restartSec: 30,
    startLimitBurst: 5,
    startLimitIntervalSec: 300,
    recoveryScript: '/usr/local/lib/agent/agent-recovery.sh',
  };
  const script: RecoveryScriptSettings = {
    unit: 'agent.service',
    record: '/etc/agent/record.json',
    lastGoodLink: '/usr/local/lib/agent/agent-last-good',
    recoverWith: 'last-good',
    recoverOptions: [],
    message: 'failed',
  };

  it.each(CONTROLS.filter(([name]) => name !== 'a lone surrogate'))(
    'throws an InvariantViolation for %s in an argument, a path or an option',
    (_name, control) => {
      expect(() => renderAgentUnit({ ...unit, args: ['agent', `x${control}y`] })).toThrow(InvariantViolation);
      expect(() => renderAgentUnit({ ...unit, currentLink: `/usr/local/lib/a${control}/agent-current` })).toThrow(
        InvariantViolation,
      );
      expect(() => renderRecoveryUnit({ ...unit, recoveryScript: `/usr/local/lib/${control}.sh` })).toThrow(
        InvariantViolation,
      );
      expect(() => renderRecoveryScript({ ...script, recoverOptions: ['--root', `/tmp/a${control}b`] })).toThrow(
        InvariantViolation,
      );
      expect(() => quoteExecArgument(`a${control}`)).toThrow(InvariantViolation);
      expect(() => shellQuote(`a${control}`)).toThrow(InvariantViolation);
    },
  );

  it('still renders ordinary settings', () => {
    expect(renderAgentUnit(unit).split('\n')).toContain('ExecStart=/usr/local/lib/agent/agent-current agent');
  });
});
