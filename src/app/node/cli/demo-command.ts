import { Command, Option } from 'clipanion';
import { BaseCommand } from './base-command.js';
import { interruptedExitCode } from '../../common/cli/interrupt-exit.js';

export class DemoCommand extends BaseCommand {
  static override paths = [['demo']];

  static override usage = Command.Usage({
    description:
      'Show a whole upgrade story in a throw-away sandbox: migrate, upgrade, refuse a tampered release, roll back a broken one.',
    details: `
      Needs no root and no systemd. Starts a release server on 127.0.0.1 holding a TUF
      repository (one demo key) that signs five releases of a tiny demo agent (a real x86-64
      executable): v1, v2, v2.1, a v3 that crashes on start and a v3.1 that crashes 4 s after it
      starts. Each upgraded agent must stay healthy for a 6 s watch window after its 1.5 s
      stability gate. Creates a sandbox with a legacy
      v1 install that trusts the repository's first root, migrates it to the blue/green layout,
      runs the agent under the built-in supervisor and upgrades it to v2 with \`install --url\`.
      Then v2.1's archive is swapped on the release server, as by someone who can write there but
      holds no key: the install is refused (E_UNTRUSTED) before anything reaches a slot. Last, v3:
      the supervisor restarts it until its start limit, the health gate fails, and current goes
      back to v2 automatically. Then v3.1: it passes the gate, crashes inside its watch window,
      and is rolled back the same way; both broken digests are quarantined. Prints a timeline of
      phases, link targets and what runs.

      With \`--systemd\` the host's systemd runs the agent instead, as a runtime unit with a name
      unique to the run (root needed); the unit is stopped and removed at the end.

      Nothing keeps running afterwards, and the sandbox is removed unless \`--keep\` is given.
      Takes about 20 seconds. SIGINT, SIGTERM or SIGHUP — or the reader of its output going away
      (\`demo | head\`) — stop it at the next step (an upgrade in flight is rolled back first),
      with the same clean-up. Exit codes: 0 shown, 1 failed, 2 invalid input, 128 + the
      signal's number when stopped early: 130 SIGINT, 143 SIGTERM, 129 SIGHUP, 141 when the
      output's reader went away (E_INTERRUPTED).
    `,
    examples: [
      ['Run the demo', 'agent-upgrade demo'],
      ['Keep the sandbox to look around afterwards', 'agent-upgrade demo --keep'],
      ['The same story under systemd', 'sudo agent-upgrade demo --systemd'],
    ],
  });

  keep = Option.Boolean('--keep', false, { description: 'Keep the sandbox directory (nothing keeps running)' });
  systemd = Option.Boolean('--systemd', false, {
    description: "Run the agent under this host's systemd (root; a runtime unit, removed afterwards)",
  });

  override async execute(): Promise<number> {
    const invalid = this.invalidLogLevel();
    if (invalid !== null) return this.failWith(invalid);
    // The timeline is the demo's output: its expected warnings and errors (plain-HTTP downloads,
    // the broken release's crash loop) would only interleave with it, unless detail is asked for.
    const { identity, logger } = await this.context.host(
      ['info', 'debug', 'trace'].includes(this.logLevel) ? this.logLevel : 'fatal',
      this.path,
    );
    // Loaded on use: `--help` and the other commands start without the upgrader's modules.
    const [{ runDemo }, { runUseCase }, { SystemClock }, { HealthLine }] = await Promise.all([
      import('../demo/run-demo.js'),
      import('../../common/failure-signal.js'),
      import('../../../adapters/common/runtime/system-clock.js'),
      import('./health-line.js'),
    ]);
    const clock = new SystemClock();
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const { result, signal } = await this.interruptible(async (signal) => {
      // Each install's health wait, on a terminal: erased before every timeline line, which
      // goes to stdout, likely the same terminal. The sandbox runs the flex profile's agent.
      const health =
        !this.json && stderr.isTTY === true
          ? new HealthLine(stderr, 'aks-flex-node', () => clock.monotonicMs(), signal)
          : null;
      const print = (line: string): void => {
        health?.clear();
        if (!this.json) this.context.stdout.write(`${line}\n`);
      };
      const options = { keep: this.keep, systemd: this.systemd, identity, logger, clock, print, signal };
      try {
        return {
          result: await runUseCase(() => runDemo({ ...options, onHealthProgress: health?.observe })),
          signal,
        };
      } finally {
        health?.finish();
      }
    });
    if (!result.ok) {
      const exitCode = this.failWith(result.failure);
      return interruptedExitCode(signal, result.failure) ?? exitCode;
    }
    return this.succeed({ demo: result.value }, []);
  }
}
