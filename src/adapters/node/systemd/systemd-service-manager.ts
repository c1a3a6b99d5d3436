import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Clock } from '../../../ports/common/clock.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import type { RestartObservation, ServiceActivity, ServiceManager } from '../../../ports/node/service-manager.js';
import { convergeFiles, filesCurrent, type OwnedFile } from '../service/converge-files.js';
import { SampledMainProcess } from '../service/sampled-main-process.js';
import { sampleOf, type MainProcessObservation } from '../service/stable-executable.js';
import { Systemctl, type UnitProperties } from './systemctl.js';

/** The managed path's hand-over waits this long, so the calling daemon can return first. */
export const RESTART_DELAY_MS = 2000;

export interface SystemdOptions {
  readonly fs: FileSystem;
  readonly runner: ProcessRunner;
  readonly clock: Clock;
  readonly unit: string;
  /** The agent unit, the recovery unit and the recovery script, rendered from configuration. */
  readonly assets: readonly OwnedFile[];
  readonly unitDir: string;
  /** Units whose loaded copy must match the disk (default: the agent unit). */
  readonly reloadWatched?: readonly string[];
  readonly restartDelayMs?: number;
  /**
   * Where `<pid>/exe` is read. `/proc` on a host; a test that drives a systemd in another PID
   * namespace passes that namespace's procfs, because MainPID is a PID of that namespace.
   */
  readonly procRoot?: string;
}

/**
 * The agent as a systemd service (docs/operations.md#systemd-default): units and recovery script
 * written atomically and reloaded only when they changed, a synchronous restart for the direct
 * path, a transient delayed restart for the managed hand-over, and health read from MainPID's
 * executable.
 */
export class SystemdServiceManager extends SampledMainProcess implements ServiceManager {
  readonly name = 'systemd' as const;
  private readonly systemctl: Systemctl;
  protected readonly healthClock: Clock;

  constructor(private readonly options: SystemdOptions) {
    super();
    this.systemctl = new Systemctl(options.runner);
    this.healthClock = options.clock;
  }

  async convergeAssets(): Promise<{ readonly changed: boolean }> {
    await this.options.fs.ensureDirectory(this.options.unitDir, 0o755);
    const changed = await convergeFiles(this.options.fs, this.options.assets);
    // Converged as state, not as an event: reload when files changed, and also when systemd
    // still holds an older unit than the disk (an earlier run wrote it, then its reload failed
    // or it died first), so running migrate again always finishes the job.
    if (changed || (await this.reloadPending())) await this.systemctl.systemctl(['daemon-reload']);
    return { changed };
  }

  async assetsCurrent(): Promise<boolean> {
    return (await filesCurrent(this.options.fs, this.options.assets)) && !(await this.reloadPending());
  }

  private async reloadPending(): Promise<boolean> {
    for (const unit of this.options.reloadWatched ?? [this.options.unit]) {
      if (await this.systemctl.needsReload(unit)) return true;
    }
    return false;
  }

  async activity(): Promise<ServiceActivity> {
    return activityOf(await this.systemctl.show(this.options.unit));
  }

  async currentRun(): Promise<string | null> {
    const { invocationId } = await this.systemctl.show(this.options.unit);
    return invocationId === '' ? null : invocationId;
  }

  async restart(options: { readonly resetFailed?: boolean } = {}): Promise<{ readonly restarted: boolean }> {
    const activity = await this.activity();
    // A reset or rejoined host stopped the agent on purpose: it stays stopped.
    if (activity === 'inactive' || activity === 'absent') return { restarted: false };
    if (options.resetFailed === true || activity === 'failed')
      await this.systemctl.systemctl(['reset-failed', '--', this.options.unit]);
    try {
      await this.systemctl.systemctl(['restart', '--', this.options.unit]);
    } catch (error) {
      // With Type=exec the job fails when the new binary exits during its start. systemd did
      // restart it, and judging that binary is the health wait's job (E_UNHEALTHY, rollback);
      // only a unit that is gone or unreadable is a failure of the restart itself.
      const after = await this.activity().catch(() => 'unknown' as const);
      if (after === 'absent' || after === 'unknown' || after === 'inactive') throw error;
    }
    return { restarted: true };
  }

  async scheduleRestart(): Promise<void> {
    const { unit } = this.options;
    const delayMs = this.options.restartDelayMs ?? RESTART_DELAY_MS;
    const name = `${unit.replace(/\.service$/, '')}-restart-${randomBytes(6).toString('hex')}`;
    await this.systemctl.systemdRun([
      `--unit=${name}`,
      '--collect',
      `--on-active=${delayMs}ms`,
      '--timer-property=AccuracySec=100ms',
      `--description=agent-upgrade: restart ${unit} into the switched binary`,
      // try-restart: an agent stopped meanwhile (reset/rejoin) is not started again.
      'systemctl',
      'try-restart',
      unit,
    ]);
  }

  async restartCount(): Promise<RestartObservation> {
    const { restarts } = await this.systemctl.show(this.options.unit);
    // systemd keeps the count in memory: it lives as long as this boot.
    return { restartEpoch: restarts === null ? null : await bootId(this.options.procRoot ?? '/proc'), restarts };
  }

  protected async sample(): Promise<MainProcessObservation> {
    const properties = await this.systemctl.show(this.options.unit);
    if (properties.activeState === 'failed') return 'gave-up';
    if (properties.mainPid === 0) return null;
    return sampleOf(properties.mainPid, this.options.procRoot);
  }
}

/** The kernel's id of this boot, or null when it cannot be read (then no count is compared). */
async function bootId(procRoot: string): Promise<string | null> {
  try {
    const text = (await readFile(`${procRoot}/sys/kernel/random/boot_id`, 'utf8')).trim();
    return /^[0-9a-f-]{36}$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

function activityOf(properties: UnitProperties): ServiceActivity {
  if (properties.loadState === 'not-found') return 'absent';
  switch (properties.activeState) {
    case 'active':
    case 'activating':
    case 'reloading':
    case 'deactivating':
      return 'active';
    case 'inactive':
      return 'inactive';
    case 'failed':
      return 'failed';
    default:
      return 'unknown';
  }
}
