/**
 * The text of the agent unit, the recovery unit and the recovery script (docs/operations.md#systemd-default), rendered from
 * configuration. Pure: the systemd adapter writes what these return and compares it with what is
 * installed.
 */
import { InvariantViolation } from '../../../domain/common/invariant.js';
import type { OwnedFile } from '../service/converge-files.js';

/**
 * C0 controls, DEL and C1. A line break in a unit starts a new directive and systemd drops or
 * rewrites other controls, so no quoting makes them safe. Configuration refuses them first
 * (`E_CONFIG`); reaching this is a bug, and rendering must stop rather than write a changed unit.
 */
const CONTROL_CHARACTER = /\p{Cc}/u;

function assertRenderable(field: string, value: string): string {
  if (CONTROL_CHARACTER.test(value))
    throw new InvariantViolation(`${field} contains a control character and cannot be rendered into a unit or script`);
  return value;
}

/**
 * What systemd refuses in ExecStart's program path however it is quoted or escaped: quotes and
 * the backslash (systemd's string_is_safe(); "Executable name contains special characters"),
 * besides the control characters refused everywhere. A unit naming such a path has a fatal error
 * and never starts, so configuration refuses these paths before anything is written.
 */
const UNSAFE_IN_PROGRAM_PATH = /["'\\]/;

/** Whether systemd can run `path` as ExecStart's program (docs/configuration.md#validation). */
export function systemdCanNameProgram(path: string): boolean {
  return !UNSAFE_IN_PROGRAM_PATH.test(path) && !CONTROL_CHARACTER.test(path);
}

/** Every text a unit or the script is rendered from, named for the refusal. */
function assertUnitSettings(settings: UnitSettings): void {
  const { description, unit, recoveryUnit, currentLink, recoveryScript } = settings;
  for (const [field, value] of Object.entries({ description, unit, recoveryUnit, currentLink, recoveryScript }))
    assertRenderable(field, value);
  settings.args.forEach((argument, index) => assertRenderable(`args[${index}]`, argument));
  const { agentName, healthTimeoutMs } = settings;
  if (agentName !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(agentName))
    throw new InvariantViolation('agentName must be 1-64 letters, digits, ".", "_" or "-" to be a journal tag');
  if (healthTimeoutMs !== undefined && !(Number.isFinite(healthTimeoutMs) && healthTimeoutMs > 0))
    throw new InvariantViolation('healthTimeoutMs must be a positive number of milliseconds');
}

function assertScriptSettings(settings: RecoveryScriptSettings): void {
  const { unit, record, lastGoodLink, recoverWith, message } = settings;
  for (const [field, value] of Object.entries({ unit, record, lastGoodLink, recoverWith, message }))
    assertRenderable(field, value);
  settings.recoverOptions.forEach((option, index) => assertRenderable(`recoverOptions[${index}]`, option));
}

export interface UnitSettings {
  readonly description: string;
  /**
   * `agent.name`: the journal tag of the agent's lines. Left to systemd (absent), the tag is the
   * ExecStart program's name, the current link (`aks-flex-node-current`).
   */
  readonly agentName?: string;
  /** The unit file names, e.g. `aks-flex-node-agent.service`. */
  readonly unit: string;
  readonly recoveryUnit: string;
  /** ExecStart runs the current link, so a switch changes what the next start runs. */
  readonly currentLink: string;
  readonly args: readonly string[];
  readonly restartSec: number;
  readonly startLimitBurst: number;
  readonly startLimitIntervalSec: number;
  readonly recoveryScript: string;
  /** `health.timeoutMs`, which bounds how long the recovery unit's `recover` may take (absent: unbounded). */
  readonly healthTimeoutMs?: number;
}

/**
 * Documentation= of every unit agent-upgrade writes: the manual page it ships
 * (man/man8/agent-upgrade.8). A man: URI, because no URL or installed file is guaranteed.
 */
export const UNIT_DOCUMENTATION = 'man:agent-upgrade(8)';

/** How long systemd waits for the agent to stop (SIGTERM, then SIGKILL). */
const AGENT_STOP_TIMEOUT_SEC = 60;
/** Node's start and the script's systemctl calls, beyond what recover itself waits for. */
const RECOVERY_MARGIN_SEC = 30;

/**
 * TimeoutStartSec= of the oneshot recovery unit. `recover` waits up to twice the health timeout
 * for a busy host lock, then restarts the agent (a stop of up to TimeoutStopSec) and may wait
 * one more health timeout; without a bound a wedged recovery would hold its start job forever.
 */
export function recoveryTimeoutSec(healthTimeoutMs: number): number {
  return Math.ceil((3 * healthTimeoutMs) / 1000) + AGENT_STOP_TIMEOUT_SEC + RECOVERY_MARGIN_SEC;
}

export interface RecoveryScriptSettings {
  readonly unit: string;
  readonly record: string;
  readonly lastGoodLink: string;
  /**
   * How recovery is invoked: `last-good` runs `<last-good binary> recover` (self-hosted: the agent
   * is the upgrader), or the absolute path of the upgrader's own executable (sidecar).
   */
  readonly recoverWith: 'last-good' | string;
  /** Options that select this upgrader's configuration (`--root`, `--config`), passed to `recover`. */
  readonly recoverOptions: readonly string[];
  readonly message: string;
}

export function renderAgentUnit(settings: UnitSettings): string {
  assertUnitSettings(settings);
  const execStart = execCommandLine(settings.currentLink, settings.args);
  return [
    '# Written by agent-upgrade; changes here are replaced on the next migration.',
    '[Unit]',
    `Description=${settings.description}`,
    `Documentation=${UNIT_DOCUMENTATION}`,
    'After=network-online.target',
    'Wants=network-online.target',
    `OnFailure=${settings.recoveryUnit}`,
    `StartLimitIntervalSec=${settings.startLimitIntervalSec}`,
    `StartLimitBurst=${settings.startLimitBurst}`,
    '',
    '[Service]',
    // exec, not simple: a start whose program cannot be executed (a dangling current link) fails
    // the start job instead of passing for a started service.
    'Type=exec',
    `ExecStart=${execStart}`,
    ...(settings.agentName === undefined ? [] : [`SyslogIdentifier=${settings.agentName}`]),
    'Restart=on-failure',
    `RestartSec=${settings.restartSec}`,
    'TimeoutStartSec=300',
    `TimeoutStopSec=${AGENT_STOP_TIMEOUT_SEC}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

export function renderRecoveryUnit(settings: UnitSettings): string {
  assertUnitSettings(settings);
  return [
    '# Written by agent-upgrade; changes here are replaced on the next migration.',
    '[Unit]',
    `Description=Recover ${settings.unit} after it failed repeatedly`,
    `Documentation=${UNIT_DOCUMENTATION}`,
    '',
    '[Service]',
    'Type=oneshot',
    `ExecStart=${execCommandLine(settings.recoveryScript, [])}`,
    ...(settings.healthTimeoutMs === undefined
      ? []
      : [`TimeoutStartSec=${recoveryTimeoutSec(settings.healthTimeoutMs)}`]),
    '',
  ].join('\n');
}

/**
 * The OnFailure script. Without a pending managed upgrade it exits 0 (an ordinary failure must
 * not change the selected binary). Otherwise it runs `recover` — which takes the host lock and is
 * idempotent, so running while systemd still auto-restarts the unit is harmless — then, if the
 * unit is still failed, clears the failed state and restarts it. Every step runs even if an
 * earlier one failed, and the script exits with the last failure.
 */
export function renderRecoveryScript(settings: RecoveryScriptSettings): string {
  assertScriptSettings(settings);
  // systemd (251 and later) names the failed run of the agent unit; recover does nothing once the
  // unit was started again since (docs/protocol.md#r1a). Only a unit that stays failed names it:
  // systemd 255 and later also run this between automatic restarts, and a restart that systemd
  // made on its own is no sign the failure was handled. Hex, so the unquoted expansion is safe.
  const failedRun = '${failed_run:+--failed-run "$failed_run"}';
  const recoverArguments = `${['recover', '--message', settings.message, ...settings.recoverOptions]
    .map(shellQuote)
    .join(' ')} ${failedRun}`;
  const recoverLine =
    settings.recoverWith === 'last-good'
      ? [
          `target=$(readlink -f ${shellQuote(settings.lastGoodLink)}) || target=''`,
          'if [ -z "$target" ] || [ ! -x "$target" ]; then',
          "  echo 'agent-upgrade recovery: no executable last-good binary' >&2",
          '  exit 1',
          'fi',
          `"$target" ${recoverArguments} || status=$?`,
        ]
      : [`${shellQuote(settings.recoverWith)} ${recoverArguments} || status=$?`];
  return [
    '#!/bin/sh',
    '# Written by agent-upgrade: run by the OnFailure unit when systemd gave up on the agent.',
    'set -u',
    'status=0',
    `if [ ! -f ${shellQuote(settings.record)} ]; then`,
    '  exit 0',
    'fi',
    "failed_run=''",
    `if systemctl is-failed --quiet -- ${shellQuote(settings.unit)}; then`,
    '  failed_run="${MONITOR_INVOCATION_ID:-}"',
    'fi',
    ...recoverLine,
    // recover restarts the agent itself; this is for a recover that failed or could not run. A unit
    // that runs again (recover restarted it, or it was started since it failed) is left alone.
    `if systemctl is-failed --quiet -- ${shellQuote(settings.unit)}; then`,
    `  systemctl reset-failed ${shellQuote(settings.unit)} || status=$?`,
    `  systemctl --no-block restart ${shellQuote(settings.unit)} || status=$?`,
    'fi',
    'exit "$status"',
    '',
  ].join('\n');
}

/**
 * ExecStart= running `program` with `args`. systemd takes the program path verbatim apart from
 * specifiers: it expands no `$` there, so a `$` is written as is (`$$` would stay two). It does
 * expand `$` in every argument, argv[0] included, so a path with a `$` gets its argv[0] as a
 * separate, escaped argument (the `@` prefix) and the agent still sees its own path there.
 */
export function execCommandLine(program: string, args: readonly string[]): string {
  if (!systemdCanNameProgram(program))
    throw new InvariantViolation(`systemd cannot name the program ${JSON.stringify(program)} in ExecStart=`);
  const escaped = program.replace(/%/g, '%%');
  // Inside double quotes only `\` and `"` would be special, and neither can occur here.
  const path = /^[A-Za-z0-9_./:=@+,%-]+$/.test(program) ? escaped : `"${escaped}"`;
  const head = program.includes('$') ? [`@${path}`, quoteExecArgument(program)] : [path];
  return [...head, ...args.map(quoteExecArgument)].join(' ');
}

/** systemd's ExecStart quoting of an argument: double quotes, with `\`, `"`, `$` and `%` escaped. */
export function quoteExecArgument(argument: string): string {
  assertRenderable('an ExecStart argument', argument);
  if (/^[A-Za-z0-9_./:=@+,-]+$/.test(argument)) return argument.replace(/%/g, '%%');
  const escaped = argument.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '$$$$').replace(/%/g, '%%');
  return `"${escaped}"`;
}

/** POSIX shell quoting: plain words stay bare, everything else is single-quoted. */
export function shellQuote(text: string): string {
  assertRenderable('a shell word', text);
  if (/^[A-Za-z0-9_./=@+,-]+$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export const UNIT_FILE_MODE = 0o644;

/** Every file the systemd platform owns, rendered from configuration. */
export function renderServiceAssets(
  unit: UnitSettings,
  recovery: RecoveryScriptSettings,
  unitDir: string,
  scriptMode: number,
): readonly OwnedFile[] {
  assertRenderable('unitDir', unitDir);
  return [
    { path: `${unitDir}/${unit.unit}`, text: renderAgentUnit(unit), mode: UNIT_FILE_MODE },
    { path: `${unitDir}/${unit.recoveryUnit}`, text: renderRecoveryUnit(unit), mode: UNIT_FILE_MODE },
    { path: unit.recoveryScript, text: renderRecoveryScript(recovery), mode: scriptMode },
  ];
}
