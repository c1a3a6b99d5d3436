import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { failure } from '../../../domain/common/failure.js';
import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import type { HealthObserver } from '../health/health-progress.js';
import type { HostIdentity } from '../host-identity.js';
import type { Upgrader } from '../upgrader.js';
import { CRASH_LATER_SECONDS, demoAgentElf, type DemoBehaviour } from './demo-agent-elf.js';
import { supervisorPlatform, systemdPlatform, type DemoPlatform } from './demo-platforms.js';
import { DemoReleaseServer, sha256, type DemoRelease } from './demo-releases.js';
import { setUpDemo } from './demo-setup.js';

export interface DemoOptions {
  /** Leave the sandbox directory for inspection (nothing keeps running either way). */
  readonly keep: boolean;
  /** Run the agent under the host's systemd instead of the built-in supervisor. */
  readonly systemd: boolean;
  readonly identity: HostIdentity;
  readonly logger: Logger;
  /** Times the timeline and paces the wait for the agent to start. */
  readonly clock: Clock;
  readonly print: (line: string) => void;
  /** Aborted by an interrupt: the demo stops at its next step, cleaning up as at its end. */
  readonly signal?: AbortSignal | undefined;
  /** Hears each install's health waits (the demo command's line on a terminal). */
  readonly onHealthProgress?: HealthObserver | undefined;
}

export interface DemoReport {
  readonly sandbox: string;
  readonly kept: boolean;
  readonly steps: readonly DemoStep[];
}

export interface DemoStep {
  readonly atMs: number;
  readonly phase: string;
  readonly current: string | null;
  readonly lastGood: string | null;
  readonly running: string | null;
  readonly note: string;
  /** The error code when the step's command refused or failed (a refused tampered release, a rollback). */
  readonly code: string | null;
  /** The releases whose digests the node refuses to install again, by version. */
  readonly quarantined: readonly string[];
}

const SLOTS = '/usr/local/lib/aks-flex-node';
/**
 * `agent-upgrade demo`: a legacy v1 install in a throw-away sandbox is migrated, run under the
 * built-in supervisor (or the host's systemd with `--systemd`), upgraded to v2 from a signed
 * repository on a loopback release server, refuses a v2.1 whose archive was swapped on the
 * release host after signing, then is offered a v3 that crashes on start and a v3.1 that crashes
 * 4 s after it starts, past the stability gate, inside the watch window — both rolled back
 * automatically.
 * Without `--systemd` it needs no root and no systemd; it prints a timeline and leaves nothing
 * running.
 */
export async function runDemo(options: DemoOptions): Promise<DemoReport> {
  if (options.identity.arch !== 'amd64')
    raise(failure('E_WRONG_ARCH', 'the demo agent is an x86-64 program; run the demo on an amd64 host'));
  // Chosen first: a platform this host lacks is refused before anything is created.
  const platform = options.systemd ? systemdPlatform(options.identity.euid) : supervisorPlatform();
  const sandbox = mkdtempSync(join(tmpdir(), 'agent-upgrade-demo-'));
  const startedMs = options.clock.monotonicMs();
  const steps: DemoStep[] = [];
  let releases: DemoReleaseServer | null = null;
  // Whatever ends the story — its end, a failure, an interrupt — stops the agent and removes
  // the sandbox before the demo returns.
  try {
    releases = await DemoReleaseServer.start();
    await tellStory({ options, platform, sandbox, releases, startedMs, steps });
  } finally {
    await platform.stop();
    await releases?.close();
    if (!options.keep) rmSync(sandbox, { recursive: true, force: true });
  }
  options.print('');
  options.print(
    `Done in ${((options.clock.monotonicMs() - startedMs) / 1000).toFixed(1)} s: the agent is stopped, ${options.keep ? `the sandbox is kept at ${sandbox}` : 'the sandbox is removed'}.`,
  );
  return { sandbox, kept: options.keep, steps };
}

interface Story {
  readonly options: DemoOptions;
  readonly platform: DemoPlatform;
  readonly sandbox: string;
  readonly releases: DemoReleaseServer;
  readonly startedMs: number;
  readonly steps: DemoStep[];
}

/** The demo's phases, each recorded as a step; an interrupt ends it at the next step. */
async function tellStory(story: Story): Promise<void> {
  const { options, platform, sandbox, releases } = story;
  const { signal } = options;
  const watched: Watched = { signal, onHealthProgress: options.onHealthProgress };
  const { upgrader, published } = await setUpDemo(options, platform, sandbox, releases);
  const [, v2, swapped, v3, v31] = published as [DemoRelease, DemoRelease, DemoRelease, DemoRelease, DemoRelease];
  const label = labeller(published);
  const services = serviceProbe(upgrader, options.clock, signal, published);
  const step = stepRecorder(story, label, services);

  options.print(`Sandbox ${sandbox} (nothing outside it is touched).`);
  options.print(
    `Release server ${releases.origin}, a TUF repository signing ${published.map((release) => `v${release.version}${BEHAVIOUR_NOTES[release.behaviour]}`).join(', ')}; the node trusts its first root.`,
  );
  options.print('');
  mkdirSync(join(sandbox, 'usr/local/bin'), { recursive: true });
  writeFileSync(join(sandbox, 'usr/local/bin/aks-flex-node'), demoAgentElf('1.0.0', 'healthy'), { mode: 0o755 });
  await step('legacy install', 'v1.0.0 as a plain file at /usr/local/bin/aks-flex-node');

  const migrated = unwrap(await upgrader.migrate());
  await step('migrate', `${migrated.actions.length} actions: the legacy file copied into a slot, links created`);

  await platform.start(upgrader);
  await services.waitRunning();
  await step('start', `${platform.name} runs the agent through the current link`);

  // No digest in the requests: the signed metadata names the bytes. The signal reaches the
  // activations too: an interrupted one rolls back before it returns.
  const installed = await upgrader.install({ url: v2.url, ...watched });
  stopIfInterrupted(signal);
  const upgraded = unwrap(installed);
  await step(
    `install v${v2.version}`,
    `${upgraded.outcome}: ${upgraded.from} -> ${upgraded.to}, signed by the publisher, restarted, healthy for 1.5 s and then through its 6 s watch window`,
  );

  // Someone with write access to the release host, but not the publisher's keys, swaps an archive.
  releases.swap(swapped, v3.archive);
  const tampered = await upgrader.install({ url: swapped.url, ...watched });
  await step(
    `install v${swapped.version}`,
    `${tampered.ok ? `${tampered.value.outcome}: the swapped archive was installed` : `refused: ${tampered.failure.code}`}; the archive at its URL was swapped on the release host, and nothing reached a slot`,
    tampered.ok ? (tampered.value.failure?.code ?? null) : tampered.failure.code,
  );

  const offerBroken = installBroken(upgrader, watched, step);
  await offerBroken(v3, 'the previous binary runs again');
  await offerBroken(
    v31,
    `it passed the 1.5 s gate and crashed ${CRASH_LATER_SECONDS} s after starting, inside its watch window; the previous binary runs again`,
  );
}

const BEHAVIOUR_NOTES: Readonly<Record<DemoBehaviour, string>> = {
  healthy: '',
  'crash-on-start': ' (crashes on start)',
  'crash-later': ` (crashes ${CRASH_LATER_SECONDS} s after starting)`,
};

/** What every install of the story is given: the interrupt, and who shows its health waits. */
interface Watched {
  readonly signal: AbortSignal | undefined;
  readonly onHealthProgress: HealthObserver | undefined;
}

/** Offers a release that fails after its restart: the step shows the rollback and the quarantine. */
function installBroken(
  upgrader: Upgrader,
  watched: Watched,
  step: (phase: string, note: string, code?: string | null) => Promise<void>,
): (release: DemoRelease, what: string) => Promise<void> {
  return async (release, what) => {
    const broken = await upgrader.install({ url: release.url, ...watched });
    // A rolled-back install is a failure that says what happened on the host (`activation`).
    const brokenNote = broken.ok
      ? `${broken.value.outcome}: the broken release was kept`
      : broken.activation === null
        ? `refused: ${broken.failure.code}`
        : `${broken.activation.outcome} (${broken.failure.code}: ${broken.failure.message})`;
    await step(
      `install v${release.version}`,
      `${brokenNote}; ${what} and v${release.version}'s digest is quarantined`,
      broken.ok ? null : broken.failure.code,
    );
  };
}

/**
 * An interrupt ends the demo with `E_INTERRUPTED`, whatever the use case it cut short made of it
 * (a health wait it ended reads as unhealthy).
 */
function stopIfInterrupted(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true)
    raise(failure('E_INTERRUPTED', 'the demo was interrupted; its agent is stopped and its sandbox removed'));
}

/** Records and prints one step of the timeline; an interrupt stops the demo before and after it. */
function stepRecorder(
  { options, sandbox, startedMs, steps }: Story,
  label: (path: string | null) => string,
  services: ReturnType<typeof serviceProbe>,
): (phase: string, note: string, code?: string | null) => Promise<void> {
  return async (phase, note, code = null) => {
    stopIfInterrupted(options.signal);
    const entry: DemoStep = {
      atMs: options.clock.monotonicMs() - startedMs,
      phase,
      current: linkTarget(sandbox, 'current'),
      lastGood: linkTarget(sandbox, 'last-good'),
      running: await services.running(label),
      note,
      code,
      quarantined: await services.quarantined(),
    };
    steps.push(entry);
    options.print(render(entry, label, sandbox));
    stopIfInterrupted(options.signal);
  };
}

function serviceProbe(
  upgrader: Upgrader,
  clock: Clock,
  signal: AbortSignal | undefined,
  published: readonly DemoRelease[],
) {
  return {
    async quarantined(): Promise<string[]> {
      const status = await upgrader.status();
      const digests: readonly string[] = status.ok ? status.value.quarantine : [];
      return published.filter((release) => digests.includes(release.binarySha256)).map((release) => release.version);
    },
    async running(label: (path: string | null) => string): Promise<string | null> {
      const status = await upgrader.status();
      const executable = status.ok ? status.value.service.mainExecutable : null;
      return executable === null ? null : label(executable);
    },
    async waitRunning(): Promise<void> {
      for (let attempt = 0; attempt < 50 && signal?.aborted !== true; attempt += 1) {
        const status = await upgrader.status();
        if (status.ok && status.value.service.mainExecutable !== null) return;
        await clock.sleep(100);
      }
      if (signal?.aborted !== true) raise(failure('E_SERVICE', 'the supervisor did not start the agent within 5 s'));
    },
  };
}

/** Names a slot path by the release it holds, e.g. `green (v2.0.0)`. */
function labeller(releases: readonly DemoRelease[]): (path: string | null) => string {
  return (path) => {
    if (path === null) return 'nothing';
    const slot = /aks-flex-node-(blue|green)$/.exec(path)?.[1] ?? path;
    let digest: string | null = null;
    try {
      digest = sha256(readFileSync(path));
    } catch {
      digest = null;
    }
    const release = releases.find((candidate) => candidate.binarySha256 === digest);
    return release === undefined ? slot : `${slot} (v${release.version})`;
  };
}

function linkTarget(sandbox: string, link: 'current' | 'last-good'): string | null {
  try {
    return join(sandbox, SLOTS, readlinkSync(join(sandbox, SLOTS, `aks-flex-node-${link}`)));
  } catch {
    return null;
  }
}

function render(step: DemoStep, label: (path: string | null) => string, sandbox: string): string {
  const at = `[${(step.atMs / 1000).toFixed(1).padStart(5)} s]`;
  const links =
    step.current === null ? 'no links yet' : `current -> ${label(step.current)}, last-good -> ${label(step.lastGood)}`;
  const running = step.running === null ? 'agent not running' : `agent runs ${step.running}`;
  return `${at} ${step.phase.padEnd(16)} ${links}; ${running}\n${' '.repeat(26)}${step.note.replaceAll(sandbox, '<sandbox>')}`;
}
