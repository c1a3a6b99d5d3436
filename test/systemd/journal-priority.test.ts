import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syslogPriorityOf } from '../../src/adapters/common/logging/journal-priority.js';
import { releaseArchive } from '../support/archive/release.js';
import { serve, startHostileServer, type HostileServer } from '../support/http/hostile-server.js';
import { CLI, SystemdWorld, type SandboxHost } from '../support/systemd/systemd-host.js';

const UNIT = 'journal-probe.service';
const MEMBER = 'aks-flex-node-linux-amd64';
const RUN_TIMEOUT_MS = 60_000;
const JOURNAL_WAIT_MS = 10_000;

interface JournalEntry {
  readonly level: number;
  readonly priority: number;
}

/**
 * The CLI as a service of a real (private) systemd, its stderr connected to the real journald:
 * a `fetch` over plain HTTP without a digest logs two warnings and one info line. journald reads
 * the `<N>` prefix as the priority, so `journalctl -p warning` shows the warnings only.
 */
describe('log priorities in the journal', () => {
  let world: SystemdWorld;
  let host: SandboxHost;
  let releases: HostileServer;

  beforeAll(async () => {
    world = await SystemdWorld.create();
    host = world.host();
    releases = await startHostileServer();
    releases.route('/release.tar.gz', serve(releaseArchive(MEMBER, '\x7fELF not really')));
  }, 60_000);
  afterAll(async () => {
    await releases?.close();
    await world?.close();
  });

  /** The unit's entries: each message's pino level and the priority journald stored. */
  const entries = (args: readonly string[] = []): JournalEntry[] =>
    world.systemd
      .run('journalctl', ['--no-pager', '--output=json', `--unit=${UNIT}`, ...args])
      .stdout.split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { MESSAGE: string; PRIORITY: string })
      .filter((entry) => entry.MESSAGE.startsWith('{'))
      .map((entry) => ({
        level: (JSON.parse(entry.MESSAGE) as { level: number }).level,
        priority: Number(entry.PRIORITY),
      }));

  it('stores each line at its priority; `-p warning` has the warnings and not the info line', async () => {
    mkdirSync(host.path('/out'), { recursive: true });
    const command = [
      CLI,
      'fetch',
      '--url',
      releases.url('/release.tar.gz'),
      '--member',
      MEMBER,
      '--output',
      host.path('/out/agent'),
      '--root',
      host.root,
      '--log-level',
      'info',
    ];
    const run = await world.systemd.runAsync(
      'systemd-run',
      [`--unit=${UNIT}`, '--wait', '--collect', '--quiet', process.execPath, ...command],
      { timeoutMs: RUN_TIMEOUT_MS },
    );
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
    // journald may still be writing what the service logged just before it exited.
    expect(await world.systemd.waitFor(() => entries().some((entry) => entry.level === 30), JOURNAL_WAIT_MS)).toBe(
      true,
    );
    const all = entries();
    // Three warnings (plain HTTP, no digest, no signatures), then the info line of the fetch.
    expect(all.map((entry) => entry.level)).toEqual([40, 40, 40, 30]);
    expect(all.map((entry) => entry.priority)).toEqual(all.map((entry) => syslogPriorityOf(entry.level)));
    expect(entries(['--priority=warning']).map((entry) => entry.level)).toEqual([40, 40, 40]);
  });
});
