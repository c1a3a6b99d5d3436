import { Command, Option } from 'clipanion';
import { ExitCode } from '../../../domain/common/error-codes.js';
import type { RolloutPhase } from '../../../domain/fleet/status/rollout-status.js';
import type { RolloutView } from '../rollout/rollout-view.js';
import { OperatorCommand } from './cluster-command.js';
import { CLUSTER_HELP as CLUSTER, EXITS_HELP as EXITS } from './rollout-help.js';
import { RolloutCommand } from './rollout-commands.js';
import { renderRolloutList } from './rollout-list-render.js';
import { renderRollout } from './rollout-render.js';
import { WatchPrinter } from './watch-printer.js';

/** Between two reads of `--watch`: the controller's own status updates are seconds apart. */
const WATCH_POLL_MS = 2_000;

/** How `--watch` exits on the phase the rollout ended in. */
const WATCH_EXIT: Readonly<Partial<Record<RolloutPhase, ExitCode>>> = {
  Succeeded: ExitCode.ok,
  Halted: ExitCode.rolloutHalted,
  RolledBack: ExitCode.rolledBack,
  Failed: ExitCode.failedNothingChanged,
  Aborted: ExitCode.failedNothingChanged,
};

/** The JSON document of one rollout: the spec fields that frame it, and its status exactly as read. */
const documentOf = ({ name, release, state, phase, resourceVersion, generation, status }: RolloutView) => ({
  name,
  release,
  state,
  phase,
  resourceVersion,
  generation,
  status,
});

export class RolloutStatusCommand extends RolloutCommand {
  static override paths = [['rollout', 'status']];
  watch = Option.Boolean('-w,--watch', false, { description: 'Follow the rollout until it ends' });
  timeout = Option.String('--timeout', {
    description: 'With --watch: stop watching after this many seconds (default: never)',
  });

  static override usage = Command.Usage({
    description: "Show an AgentRollout's phase, progress, waves, halt and rollback; --watch follows it.",
    details: `
      Reads the rollout without changing anything. Text: \`Key: value\` lines (state asked for,
      phase reported, progress, counts, what it waits on and until when, the halt and what to do
      about it, failures by reason and node label, the rollback), then one row per wave and each
      wave's analysis. \`-o json\` (or \`--json\`) and \`-o yaml\`: \`rollout\` holds the name,
      release, state and phase and \`status\`, the status exactly as read.

      With \`--watch\`, the rollout is read every 2 s until it ends. On a terminal the view is
      redrawn in place (a progress bar per wave, what it waits on, the failures); otherwise one
      line is printed per change of phase, wave, progress, in-flight or failures. Its exit code
      says how the rollout ended: 0 Succeeded, 6 Halted (a person must act), 3 RolledBack, 1
      Failed or Aborted, or \`E_TIMEOUT\` (1) after \`--timeout\` seconds. Ctrl-C stops watching;
      the rollout goes on.
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [
      ['Show a rollout', '$0 rollout status fleet-v1-4-2'],
      ['Follow it until it ends', '$0 rollout status fleet-v1-4-2 --watch'],
      [
        'Wait for it in a script, at most an hour',
        '$0 rollout status fleet-v1-4-2 --watch --timeout 3600 > rollout.log',
      ],
      ['Its status as YAML', '$0 rollout status fleet-v1-4-2 -o yaml'],
      [
        'In another cluster of a kubeconfig',
        '$0 rollout status fleet-v1-4-2 --kubeconfig ./fleet.kubeconfig --context prod-eu',
      ],
    ],
  });

  override async execute(): Promise<number> {
    const timeoutMs = this.timeoutMs();
    if (timeoutMs === undefined)
      return this.failWith({ code: 'E_USAGE', message: '--timeout must be whole seconds, at least 1' });
    const control = await this.control();
    if (!control.ok) return this.failWith(control.failure);
    if (!this.watch) {
      const view = await control.value.status(this.name);
      if (!view.ok) return this.failWith(view.failure);
      return this.done({ rollout: documentOf(view.value) }, renderRollout(view.value));
    }
    const printer = new WatchPrinter(this.context.stdout, this.printsDocument);
    const ended = await this.interruptible((signal) =>
      control.value.watch(this.name, { pollMs: WATCH_POLL_MS, timeoutMs, signal }, (view) => printer.show(view)),
    );
    printer.finish();
    if (!ended.ok) return this.failWith(ended.failure);
    const exitCode = WATCH_EXIT[ended.value.phase ?? 'Preview'] ?? ExitCode.ok;
    return this.done({ rollout: documentOf(ended.value) }, [], exitCode);
  }

  /** `--timeout` in milliseconds: `null` when not given, `undefined` when it is not whole seconds. */
  private timeoutMs(): number | null | undefined {
    if (this.timeout === undefined) return null;
    const seconds = /^[1-9][0-9]{0,6}$/.test(this.timeout) ? Number(this.timeout) : NaN;
    return Number.isSafeInteger(seconds) ? seconds * 1000 : undefined;
  }
}

export class RolloutListCommand extends OperatorCommand {
  static override paths = [['rollout', 'list']];

  static override usage = Command.Usage({
    description: 'List the AgentRollouts of the cluster: release, state, phase, wave, progress.',
    details: `
      One row per rollout, by name: its release, the state asked for, the phase reported, the
      current wave, progress, operations in flight, failures and age. \`-o wide\` adds the halt and
      what each rollout waits on; \`-o json\` and \`-o yaml\` give every rollout as \`rollout status\`
      gives one.
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [
      ['List the rollouts', '$0 rollout list'],
      ['With what each waits on', '$0 rollout list -o wide'],
    ],
  });

  override async execute(): Promise<number> {
    const control = await this.control();
    if (!control.ok) return this.failWith(control.failure);
    const views = await control.value.list();
    if (!views.ok) return this.failWith(views.failure);
    return this.done({ rollouts: views.value.map(documentOf) }, renderRolloutList(views.value, this.wide));
  }
}
