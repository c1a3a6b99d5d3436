import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readlinkSync, rmdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { NodeProcessRunner } from '../../../src/adapters/common/runtime/node-process-runner.js';
import type { ProcessRunner, RunOutcome, RunRequest } from '../../../src/ports/common/process-runner.js';

/**
 * Masked so the private systemd cannot touch the host: tmpfiles would empty the host's /tmp,
 * the others change kernel or mount state.
 */
const MASKED_UNITS = [
  'systemd-tmpfiles-setup.service',
  'systemd-tmpfiles-setup-dev.service',
  'systemd-tmpfiles-clean.timer',
  'systemd-tmpfiles-clean.service',
  'tmp.mount',
  'systemd-remount-fs.service',
  'systemd-sysctl.service',
  'systemd-sysusers.service',
  'systemd-binfmt.service',
  'systemd-modules-load.service',
  'proc-sys-fs-binfmt_misc.automount',
];

const SANDBOX_TARGET =
  '[Unit]\\nDescription=sandbox\\nDefaultDependencies=no\\nWants=systemd-journald.socket dbus.socket\\nAfter=systemd-journald.socket dbus.socket\\n';

/**
 * The cgroup hierarchies a private systemd gets its own subtree in: the unified one alone on a
 * cgroup v2 host; the named `systemd` v1 hierarchy, plus `unified` when mounted, on a hybrid one.
 */
function cgroupRoots(): readonly string[] {
  if (existsSync('/sys/fs/cgroup/cgroup.controllers')) return ['/sys/fs/cgroup'];
  return ['/sys/fs/cgroup/systemd', '/sys/fs/cgroup/unified'].filter((root) => existsSync(root));
}

/**
 * Run inside a fresh cgroup namespace whose root is the boot's own cgroup: /sys/fs/cgroup is
 * mounted anew so systemd sees that cgroup as the hierarchy's root. Two private systemds then
 * keep their units apart even when the units have the same names.
 */
function innerBootScript(roots: readonly string[]): string {
  const cgroupMounts =
    roots[0] === '/sys/fs/cgroup'
      ? ['mount -t cgroup2 cgroup2 /sys/fs/cgroup']
      : [
          'mount -t tmpfs -o mode=755 tmpfs /sys/fs/cgroup',
          'mkdir /sys/fs/cgroup/systemd',
          'mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd',
          ...(roots.includes('/sys/fs/cgroup/unified')
            ? ['mkdir /sys/fs/cgroup/unified', 'mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified']
            : []),
        ];
  return [
    'set -e',
    'mount -t tmpfs tmpfs /run',
    // journald would flush into the host's /var/log/journal (creating it): keep its files private.
    'mount -t tmpfs tmpfs /var/log',
    ...cgroupMounts,
    'mkdir -p /run/systemd/system',
    `printf '${SANDBOX_TARGET}' > /run/systemd/system/sandbox.target`,
    `for unit in ${MASKED_UNITS.join(' ')}; do ln -sf /dev/null /run/systemd/system/$unit; done`,
    // Never the default target: only sandbox.target, which starts journald and D-Bus.
    'exec /lib/systemd/systemd --system --unit=sandbox.target --log-target=console',
  ].join('\n');
}

/** Moves the boot shell into its own cgroup (`$BOOT_CGROUP` in each root), then enters a new cgroup namespace. */
function outerBootScript(roots: readonly string[]): string {
  return [
    'set -e',
    `for root in ${roots.join(' ')}; do mkdir "$root/$BOOT_CGROUP"; echo $$ > "$root/$BOOT_CGROUP/cgroup.procs"; done`,
    'exec unshare --cgroup /bin/bash -c "$INNER_BOOT_SCRIPT"',
  ].join('\n');
}

/** Removes a cgroup and its children, deepest first, once their processes are gone (bounded). */
async function removeCgroupTree(path: string): Promise<void> {
  if (!existsSync(path)) return;
  for (const entry of readdirSync(path, { withFileTypes: true }))
    if (entry.isDirectory()) await removeCgroupTree(join(path, entry.name));
  for (let attempt = 1; ; attempt += 1) {
    try {
      rmdirSync(path);
      return;
    } catch (error) {
      // EBUSY while a killed process is still being reaped.
      if (attempt >= 50 || (error as NodeJS.ErrnoException).code !== 'EBUSY') throw error;
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}

const BOOT_TIMEOUT_MS = 30_000;

export interface CommandResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * systemd booted as PID 1 of a private PID and mount namespace (docs/architecture.md#platforms),
 * with `unitDirs` on its unit search path so tests install units under their temp dirs, never in
 * /etc or the host's /run. Every command runs inside the namespace through nsenter.
 */
export class PrivateSystemd {
  private constructor(
    private readonly unshare: ChildProcess,
    readonly pid: number,
    private readonly logPath: string,
    /** This boot's own cgroups, one per hierarchy, removed by `stop`. */
    private readonly cgroups: readonly string[],
  ) {}

  /** Boots it; throws with the boot log when systemd does not come up (never skips). */
  static async boot(options: {
    readonly unitDirs: readonly string[];
    readonly logPath: string;
  }): Promise<PrivateSystemd> {
    const log = openSync(options.logPath, 'a');
    const roots = cgroupRoots();
    const cgroups = roots.map((root) => join(root, `agent-upgrade-test-${randomUUID()}`));
    const unshare = spawn(
      'unshare',
      [
        '--pid',
        '--fork',
        '--mount',
        '--mount-proc',
        '--propagation',
        'private',
        '/bin/bash',
        '-c',
        outerBootScript(roots),
      ],
      {
        env: {
          ...process.env,
          // A trailing ":" keeps systemd's built-in search path after ours.
          SYSTEMD_UNIT_PATH: `${options.unitDirs.join(':')}:`,
          BOOT_CGROUP: basename(cgroups[0] ?? ''),
          INNER_BOOT_SCRIPT: innerBootScript(roots),
        },
        stdio: ['ignore', log, log],
      },
    );
    closeSync(log);
    const fail = (why: string): never => {
      unshare.kill('SIGKILL');
      let tail = '';
      try {
        tail = readFileSync(options.logPath, 'utf8').slice(-4000);
      } catch {
        // no log yet
      }
      throw new Error(`private systemd did not boot: ${why}\n${tail}`);
    };
    if (unshare.pid === undefined) return fail('unshare could not be started');
    const deadlineMs = Date.now() + BOOT_TIMEOUT_MS;
    let pid = 0;
    while (pid === 0 && Date.now() < deadlineMs) {
      const found = spawnSync('pgrep', ['-P', String(unshare.pid), '-x', 'systemd'], { encoding: 'utf8' });
      pid = Number.parseInt(found.stdout.trim(), 10) || 0;
      if (pid === 0) await new Promise((done) => setTimeout(done, 50));
    }
    if (pid === 0) return fail('no systemd process appeared');
    const manager = new PrivateSystemd(unshare, pid, options.logPath, cgroups);
    // The bus socket appears a moment after the process: retry until systemd answers.
    let state = manager.run('systemctl', ['is-system-running', '--wait'], {
      timeoutMs: Math.max(1000, deadlineMs - Date.now()),
    });
    while (state.stdout.trim() === '' && Date.now() < deadlineMs) {
      await new Promise((done) => setTimeout(done, 100));
      state = manager.run('systemctl', ['is-system-running', '--wait'], {
        timeoutMs: Math.max(1000, deadlineMs - Date.now()),
      });
    }
    if (!['running', 'degraded'].includes(state.stdout.trim())) {
      await manager.stop();
      return fail(`is-system-running said "${state.stdout.trim()}" (${state.stderr.trim()})`);
    }
    return manager;
  }

  /** The namespace's procfs, where MainPID (a PID of the namespace) can be looked up. */
  get procRoot(): string {
    return `/proc/${this.pid}/root/proc`;
  }

  /** Runs a command inside the namespace and waits for it (bounded). */
  run(
    command: string,
    args: readonly string[],
    options: { readonly timeoutMs?: number; readonly env?: NodeJS.ProcessEnv } = {},
  ): CommandResult {
    const result = spawnSync('nsenter', ['-t', String(this.pid), '-m', '-p', '--', command, ...args], {
      encoding: 'utf8',
      timeout: options.timeoutMs ?? 60_000,
      env: options.env ?? process.env,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  }

  /**
   * Runs a command inside the namespace without blocking this process (which may be serving
   * the command, e.g. a release download); killed with SIGKILL after `timeoutMs`.
   */
  runAsync(
    command: string,
    args: readonly string[],
    options: { readonly timeoutMs: number; readonly env?: NodeJS.ProcessEnv },
  ): Promise<CommandResult> {
    const child = spawn('nsenter', ['-t', String(this.pid), '-m', '-p', '--', command, ...args], {
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    return new Promise((done) => {
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        done({
          status: signal === null ? code : null,
          stdout: Buffer.concat(stdout).toString('utf8'),
          stderr: Buffer.concat(stderr).toString('utf8'),
        });
      });
    });
  }

  /** A ProcessRunner whose programs run inside the namespace (systemctl, systemd-run, agents). */
  runner(): ProcessRunner {
    const inner = new NodeProcessRunner();
    const pid = String(this.pid);
    return {
      run: (request: RunRequest): Promise<RunOutcome> =>
        inner.run({
          ...request,
          command: 'nsenter',
          args: ['-t', pid, '-m', '-p', '--', request.command, ...request.args],
        }),
    };
  }

  /** `systemctl show` of one property. */
  property(unit: string, name: string): string {
    return this.run('systemctl', ['show', `--property=${name}`, '--value', '--', unit]).stdout.trim();
  }

  /** The real path of the unit's main process executable, or null when none runs. */
  mainExecutable(unit: string): string | null {
    const pid = Number.parseInt(this.property(unit, 'MainPID'), 10);
    if (!(pid > 0)) return null;
    try {
      return readlinkSync(join(this.procRoot, String(pid), 'exe'));
    } catch {
      return null; // exited since systemd answered
    }
  }

  /** Polls `probe` until true or `timeoutMs` passed, pausing 50 ms growing to 500 ms: a probe
   * (nsenter, systemctl, D-Bus) costs ~35 ms of CPU, and a steady 100 ms made long waits costly. */
  async waitFor(probe: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadlineMs = Date.now() + timeoutMs;
    for (let pauseMs = 50; ; pauseMs = Math.min(500, Math.round(pauseMs * 1.5))) {
      if (probe()) return true;
      if (Date.now() >= deadlineMs) return false;
      await new Promise((done) => setTimeout(done, Math.min(pauseMs, Math.max(1, deadlineMs - Date.now()))));
    }
  }

  log(): string {
    return readFileSync(this.logPath, 'utf8');
  }

  /**
   * SIGKILL to the namespace's PID 1 takes every process inside with it; then reap unshare and
   * remove this boot's cgroups.
   */
  async stop(): Promise<void> {
    try {
      process.kill(this.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    if (this.unshare.exitCode === null && this.unshare.signalCode === null) {
      const exited = new Promise<void>((done) => this.unshare.once('exit', () => done()));
      const timeout = new Promise<void>((done) => setTimeout(done, 10_000).unref());
      await Promise.race([exited, timeout]);
      if (this.unshare.exitCode === null && this.unshare.signalCode === null) this.unshare.kill('SIGKILL');
    }
    for (const cgroup of this.cgroups) await removeCgroupTree(cgroup);
  }
}
