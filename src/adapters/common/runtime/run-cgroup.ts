import { performance } from 'node:perf_hooks';
import { mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';

const GROUP_PREFIX = 'agent-upgrade-run-';
/** Pause between looks at a group being emptied. */
const DRAIN_POLL_MS = 10;
/** Child groups a run's processes may have made below its own group, removed depth first. */
const NESTED_GROUPS_DEPTH_MAX = 8;

/**
 * A cgroup v2 group of its own for one run, below this process's group. Membership is what a
 * descendant cannot shed: setsid, a double fork, a cleared environment and reparenting to init
 * all leave a process in its group, and `cgroup.kill` (or signalling every member while it is
 * populated) ends every one of them.
 */
export class RunCgroup {
  /** This process could not leave the group again: never use cgroup.kill on it, spare ourselves. */
  private holdsSelf = false;

  private constructor(
    private readonly directory: string,
    private readonly home: string,
  ) {}

  /** A fresh group, or null where none can be made (no writable cgroup v2, not root). */
  static create(tag: string): RunCgroup | null {
    const home = ownCgroupDirectory();
    if (home === null) return null;
    const directory = `${home}/${GROUP_PREFIX}${tag}`;
    try {
      mkdirSync(directory);
    } catch {
      return null;
    }
    return new RunCgroup(directory, home);
  }

  /**
   * Runs `start`, a synchronous spawn, with this process inside the group, so the child is born
   * in it: no window in which it could fork outside, and the spawn's own errors (ENOENT,
   * ETXTBSY) stay as they are, which a wrapper program would turn into exit statuses. This
   * process moves back before anything else runs. Null, with the group removed, when this
   * process cannot enter it (a threaded or foreign hierarchy): the caller spawns uncontained.
   */
  spawnInside<T>(start: () => T): T | null {
    const self = String(process.pid);
    try {
      writeFileSync(`${this.directory}/cgroup.procs`, self);
    } catch {
      this.remove();
      return null;
    }
    try {
      return start();
    } finally {
      try {
        writeFileSync(`${this.home}/cgroup.procs`, self);
      } catch {
        this.holdsSelf = true;
      }
    }
  }

  /** Kills every member, then waits up to `boundMs` for the group to empty and removes it. */
  async stop(boundMs: number): Promise<void> {
    const deadlineMs = performance.now() + boundMs;
    this.kill();
    while (this.populated() && performance.now() < deadlineMs) {
      await new Promise((resolve) => setTimeout(resolve, DRAIN_POLL_MS));
      // Without cgroup.kill (before Linux 5.14) a member may have forked since the last pass.
      this.kill();
    }
    if (!this.remove()) setTimeout(() => this.remove(), boundMs).unref();
  }

  private kill(): void {
    if (!this.holdsSelf) {
      try {
        writeFileSync(`${this.directory}/cgroup.kill`, '1');
        return;
      } catch {
        // No cgroup.kill on this kernel: signal the members one by one.
      }
    }
    for (const pid of this.members()) {
      if (pid === process.pid) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }

  private members(): number[] {
    try {
      return readFileSync(`${this.directory}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  private populated(): boolean {
    try {
      return /^populated 1$/m.test(readFileSync(`${this.directory}/cgroup.events`, 'utf8'));
    } catch {
      return this.members().length > 0;
    }
  }

  /** True when the group is gone. */
  private remove(): boolean {
    return removeGroup(this.directory, NESTED_GROUPS_DEPTH_MAX);
  }
}

function removeGroup(directory: string, depth: number): boolean {
  try {
    if (depth > 0) {
      for (const entry of readdirSync(directory, { withFileTypes: true })) {
        if (entry.isDirectory()) removeGroup(`${directory}/${entry.name}`, depth - 1);
      }
    }
    rmdirSync(directory);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === 'ENOENT';
  }
}

/**
 * The directory of this process's own cgroup v2 group, found through /proc/self/cgroup (the
 * `0::` line) and a writable cgroup2 mount whose root contains it; null when there is none
 * (cgroup v1 only, or a container that mounts it read-only).
 */
function ownCgroupDirectory(): string | null {
  let membership: string;
  let mounts: string;
  try {
    membership = readFileSync('/proc/self/cgroup', 'utf8');
    mounts = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return null;
  }
  const own = membership
    .split('\n')
    .find((line) => line.startsWith('0::'))
    ?.slice(3);
  if (own === undefined || !own.startsWith('/') || own.endsWith(' (deleted)')) return null;
  for (const line of mounts.split('\n')) {
    const [left, right] = line.split(' - ');
    if (right?.split(' ')[0] !== 'cgroup2' || left === undefined) continue;
    const fields = left.split(' ');
    const [mountRoot, mountPoint, options] = [fields[3], fields[4], fields[5]].map((field) =>
      unescapeMountField(field ?? ''),
    );
    if (
      mountRoot === undefined ||
      mountPoint === undefined ||
      options === undefined ||
      options.split(',').includes('ro')
    )
      continue;
    const below =
      mountRoot === '/'
        ? own
        : own === mountRoot || own.startsWith(`${mountRoot}/`)
          ? own.slice(mountRoot.length)
          : null;
    if (below !== null)
      return below === '/' || below === '' ? mountPoint : `${mountPoint === '/' ? '' : mountPoint}${below}`;
  }
  return null;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
