import { Command, Option } from 'clipanion';
import type { RolloutAction } from '../rollout/rollout-transition.js';
import { OperatorCommand } from './cluster-command.js';
import { CLUSTER_HELP as CLUSTER, EXITS_HELP as EXITS, WRITES_HELP as WRITES } from './rollout-help.js';
import { renderApproval, renderChange } from './rollout-render.js';

/** `agent-upgrade rollout …`: one AgentRollout, named, in the cluster (docs/rollouts.md#the-operator-cli). */
export abstract class RolloutCommand extends OperatorCommand {
  name = Option.String({ name: 'NAME' });
}

abstract class RolloutChangeCommand extends RolloutCommand {
  protected abstract readonly action: RolloutAction;

  override async execute(): Promise<number> {
    const control = await this.control();
    if (!control.ok) return this.failWith(control.failure);
    const change = await control.value.change(this.name, this.action);
    if (!change.ok) return this.failWith(change.failure);
    return this.done({ rollout: change.value }, [renderChange(change.value)]);
  }
}

export class RolloutPauseCommand extends RolloutChangeCommand {
  static override paths = [['rollout', 'pause']];
  protected readonly action = 'pause';

  static override usage = Command.Usage({
    description: 'Pause an AgentRollout: sets spec.state Pause (nothing new starts).',
    details: `
      Operations already running run to their end; no new one is created until \`resume\`.
      Refused for a rollout that is aborted or rolling back (the API server would refuse it).
      ${WRITES}
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [['Pause a rollout', '$0 rollout pause fleet-v1-4-2']],
  });
}

export class RolloutResumeCommand extends RolloutChangeCommand {
  static override paths = [['rollout', 'resume']];
  protected readonly action = 'resume';

  static override usage = Command.Usage({
    description: 'Resume an AgentRollout: sets spec.state Run, and resumes a halt.',
    details: `
      Starts a rollout in Preview, or goes on with a paused one. A rollout whose status phase is
      Halted is resumed from that halt: \`spec.resumeFromHalt\` is set to \`status.halt.id\` as
      well, which is how a halt is accepted (fix what caused it and lift the release's quarantine
      first, or it halts again). A rollout paused while halted shows Halted after this; run resume
      again to resume the halt. Refused for a rollout that is aborted or rolling back.
      ${WRITES}
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [
      ['Start a rollout out of Preview', '$0 rollout resume fleet-v1-4-2'],
      ['Resume a halted rollout (after lifting the quarantine)', '$0 rollout resume fleet-v1-4-2'],
    ],
  });
}

export class RolloutAbortCommand extends RolloutChangeCommand {
  static override paths = [['rollout', 'abort']];
  protected readonly action = 'abort';

  static override usage = Command.Usage({
    description: 'Abort an AgentRollout for good: sets spec.state Abort.',
    details: `
      Nothing new is created, a rollback under way stops too; running operations run to their
      end. An aborted rollout can only be rolled back afterwards, never resumed.
      ${WRITES}
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [['Abort a rollout', '$0 rollout abort fleet-v1-4-2']],
  });
}

export class RolloutRollbackCommand extends RolloutChangeCommand {
  static override paths = [['rollout', 'rollback']];
  protected readonly action = 'rollback';

  static override usage = Command.Usage({
    description: 'Roll back every machine an AgentRollout upgraded: sets spec.state RollBack.',
    details: `
      Each machine whose operation completed on the release gets an AgentUpgrade to
      \`spec.rollback.releaseRef\`. Refused with \`E_NO_ROLLBACK_RELEASE\` when the rollout names no
      rollback release. A rollback can still be aborted, never turned back into a rollout.
      ${WRITES}
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [['Roll a rollout back', '$0 rollout rollback fleet-v1-4-2']],
  });
}

export class RolloutApproveCommand extends RolloutCommand {
  static override paths = [['rollout', 'approve']];

  static override usage = Command.Usage({
    description: "Approve the current wave's manual gate, so the next wave may start.",
    details: `
      A wave with \`gate: Manual\` holds the rollout in AwaitingApproval once it is done and has
      baked. This sets the annotation \`agent-upgrade.dev/approve-wave\` to the current wave's name
      (an approval may also come while the wave still runs or bakes). Refused with
      \`E_TRANSITION_REFUSED\` when the current wave has no manual gate, or the rollout is not moving
      forward (Halted, Paused, ended): look at \`rollout status\` first. Unchanged when the wave is
      already approved.
      ${WRITES}
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [['Approve the canary wave of a rollout', '$0 rollout approve fleet-v1-4-2']],
  });

  override async execute(): Promise<number> {
    const control = await this.control();
    if (!control.ok) return this.failWith(control.failure);
    const approval = await control.value.approve(this.name);
    if (!approval.ok) return this.failWith(approval.failure);
    return this.done({ approval: approval.value }, [renderApproval(approval.value)]);
  }
}
