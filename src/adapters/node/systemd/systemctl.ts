import { ServiceError } from '../../../domain/common/port-errors.js';
import type { ProcessRunner, RunOutcome } from '../../../ports/common/process-runner.js';

/** systemctl and systemd-run calls are bounded; a stuck D-Bus call must not hang the upgrade. */
export const SYSTEMCTL_TIMEOUT_MS = 120_000;
const OUTPUT_MAX_BYTES = 64 * 1024;

/** The unit properties the adapter reads, as `systemctl show` prints them. */
export interface UnitProperties {
  readonly loadState: string;
  readonly activeState: string;
  readonly mainPid: number;
  /** Empty when the unit never ran. */
  readonly invocationId: string;
  /** Automatic restarts since the count was last zeroed (NRestarts); null when systemd has none. */
  readonly restarts: number | null;
}

/** Runs systemctl and systemd-run without a shell; a failure is a ServiceError naming the command. */
export class Systemctl {
  constructor(private readonly runner: ProcessRunner) {}

  async systemctl(args: readonly string[]): Promise<string> {
    return this.run('systemctl', args);
  }

  async systemdRun(args: readonly string[]): Promise<string> {
    return this.run('systemd-run', args);
  }

  async show(unit: string): Promise<UnitProperties> {
    const text = await this.systemctl([
      'show',
      '--property=LoadState,ActiveState,MainPID,InvocationID,NRestarts',
      '--',
      unit,
    ]);
    const values = new Map<string, string>();
    for (const line of text.split('\n')) {
      const at = line.indexOf('=');
      if (at > 0) values.set(line.slice(0, at), line.slice(at + 1).trim());
    }
    const mainPid = Number.parseInt(values.get('MainPID') ?? '0', 10);
    const restarts = /^\d{1,9}$/.test(values.get('NRestarts') ?? '') ? Number(values.get('NRestarts')) : null;
    return {
      loadState: values.get('LoadState') ?? '',
      activeState: values.get('ActiveState') ?? '',
      mainPid: Number.isSafeInteger(mainPid) && mainPid > 0 ? mainPid : 0,
      invocationId: values.get('InvocationID') ?? '',
      restarts,
    };
  }

  /** Whether systemd still runs an older copy of the unit file than the one on disk. */
  async needsReload(unit: string): Promise<boolean> {
    const text = await this.systemctl(['show', '--property=NeedDaemonReload', '--', unit]);
    return /^NeedDaemonReload=yes$/m.test(text);
  }

  private async run(command: string, args: readonly string[]): Promise<string> {
    const outcome = await this.runner.run({
      command,
      args,
      timeoutMs: SYSTEMCTL_TIMEOUT_MS,
      outputMaxBytes: OUTPUT_MAX_BYTES,
    });
    if (outcome.kind === 'exited' && outcome.exitCode === 0) return outcome.stdout;
    const what = `${command} ${args.filter((arg) => arg !== '--').join(' ')}`;
    if (outcome.kind === 'timed-out')
      throw new ServiceError('timeout', `${what} did not finish within ${SYSTEMCTL_TIMEOUT_MS} ms`);
    throw new ServiceError('command-failed', `${what} ${describe(outcome)}`);
  }
}

function describe(outcome: Exclude<RunOutcome, { kind: 'timed-out' }>): string {
  switch (outcome.kind) {
    case 'exited':
      return `exited with status ${outcome.exitCode}${firstLine(outcome.stderr)}`;
    case 'signalled':
      return `was killed by ${outcome.signal}`;
    case 'spawn-failed':
      return `could not be started (${outcome.code})`;
  }
}

function firstLine(stderr: string): string {
  const line = stderr.trim().split('\n')[0]?.slice(0, 300) ?? '';
  return line === '' ? '' : `: ${line}`;
}
