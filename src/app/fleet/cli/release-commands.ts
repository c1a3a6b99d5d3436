import { Command, Option } from 'clipanion';
import type { QuarantineChange } from '../rollout/rollout-control.js';
import { OperatorCommand } from './cluster-command.js';
import { CLUSTER_HELP as CLUSTER, EXITS_HELP as EXITS, WRITES_HELP as WRITES } from './rollout-help.js';
import { shown } from './render-text.js';

/** `agent-upgrade release …`: one AgentRelease's quarantine (docs/rollouts.md#agentrelease). */
abstract class ReleaseQuarantineBase extends OperatorCommand {
  name = Option.String({ name: 'NAME' });
  protected abstract readonly quarantined: boolean;
  abstract reason: string | undefined;

  override async execute(): Promise<number> {
    const control = await this.control();
    if (!control.ok) return this.failWith(control.failure);
    const wanted = { quarantined: this.quarantined, reason: this.reason ?? '' };
    const change = await control.value.quarantine(this.name, wanted);
    if (!change.ok) return this.failWith(change.failure);
    return this.done({ release: change.value }, [renderQuarantine(change.value)]);
  }
}

export class ReleaseQuarantineCommand extends ReleaseQuarantineBase {
  static override paths = [['release', 'quarantine']];
  reason = Option.String('--reason', {
    required: true,
    description: 'Why (at most 1024 characters; shown in the release)',
  });
  protected readonly quarantined = true;

  static override usage = Command.Usage({
    description: 'Quarantine an AgentRelease: no rollout dispatches it until a person lifts it.',
    details: `
      Sets \`spec.quarantine\` to \`{quarantined: true, reason}\`. A rollout of a quarantined
      release creates nothing more and halts with \`ReleaseQuarantined\`; operations already
      running run to their end. A halted rollout with \`quarantineOnHalt\` (the default) does this
      by itself. Unchanged when the release is already quarantined (its reason is kept).
      ${WRITES}
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [
      [
        'Stop every rollout of a release',
        '$0 release quarantine aks-flex-node-v1.4.2 --reason "kubelet restarts on arm64"',
      ],
    ],
  });
}

export class ReleaseUnquarantineCommand extends ReleaseQuarantineBase {
  static override paths = [['release', 'unquarantine']];
  reason = Option.String('--reason', { description: 'Why it is safe again (optional; shown in the release)' });
  protected readonly quarantined = false;

  static override usage = Command.Usage({
    description: "Lift an AgentRelease's quarantine, so rollouts may dispatch it again.",
    details: `
      Sets \`spec.quarantine\` to \`{quarantined: false, reason}\`. Nothing restarts by itself: a
      rollout that halted on this release stays Halted until \`rollout resume\`, which then runs
      the halted wave on (and its analysis from the start). Lift it only once the failure is
      understood. Unchanged when the release is not quarantined.
      ${WRITES}
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [
      [
        'Lift the quarantine, then resume the halted rollout',
        '$0 release unquarantine aks-flex-node-v1.4.2 --reason "fixed in the node image"',
      ],
    ],
  });
}

function renderQuarantine(change: QuarantineChange): string {
  const state = (quarantined: boolean): string => (quarantined ? 'quarantined' : 'not quarantined');
  if (!change.changed) return `Release ${change.release} is already ${state(change.to.quarantined)}; unchanged.`;
  const reason = change.to.reason === '' ? '' : ` (reason: ${shown(change.to.reason)})`;
  const next = change.to.quarantined
    ? 'Rollouts of it halt at their next reconcile.'
    : 'A rollout halted on it resumes with `agent-upgrade rollout resume NAME`.';
  return `Release ${change.release}: ${state(change.from.quarantined)} -> ${state(change.to.quarantined)}${reason}. ${next}`;
}
