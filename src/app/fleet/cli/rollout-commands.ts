import { Command, Option } from 'clipanion';
import type { Result } from '../../../domain/common/failure.js';
import type { RolloutControl } from '../rollout/rollout-control.js';
import type { RolloutAction } from '../rollout/rollout-transition.js';
import { ClusterCommand } from './cluster-command.js';
import { renderChange, renderRollout } from './rollout-render.js';

const CLUSTER = `
      The cluster is chosen as kubectl chooses it: \`--kubeconfig\`, else KUBECONFIG, the
      in-cluster service account or ~/.kube/config, and \`--context\` or the current context.
      AgentRollouts are cluster-scoped, so there is no namespace to give. The identity needs get
      (status) and patch (the others) on \`agentrollouts.agent-upgrade.dev\`.`;

const EXITS = `
      Exit codes: 0 done, or already so ("unchanged"); 1 failed and nothing changed
      (\`E_NOT_FOUND\`: no such rollout; \`E_CLUSTER\`, \`E_CLUSTER_AUTH\`); 2 usage or a change the API
      server would refuse (\`E_TRANSITION_REFUSED\`, \`E_NO_ROLLBACK_RELEASE\`), refused before
      anything is sent.`;

const WRITES = `
      The change is a merge-patch of \`spec\` guarded by the resourceVersion it was read at: when
      the rollout changed in between (409 Conflict), it is read again and decided again, up to 5
      times.`;

/** `agent-upgrade rollout …`: one AgentRollout, named, in the cluster (docs/rollouts.md#the-operator-cli). */
abstract class RolloutCommand extends ClusterCommand {
  name = Option.String({ name: 'NAME' });

  protected async control(): Promise<Result<RolloutControl>> {
    const invalid = this.invalidLogLevel();
    if (invalid !== null) return { ok: false, failure: invalid };
    return { ok: true, value: await this.context.openRollouts(this.cluster()) };
  }
}

export class RolloutStatusCommand extends RolloutCommand {
  static override paths = [['rollout', 'status']];

  static override usage = Command.Usage({
    description: "Show an AgentRollout's phase, progress, waves, halt and rollback.",
    details: `
      Reads the rollout without changing anything. Text: \`Key: value\` lines (state asked for,
      phase reported, progress, counts, the halt and how to resume it, the rollback), then one row
      per wave: its phase, size, cursor and operations in flight, failures used of the budget,
      and until when it bakes. With \`--json\`, \`rollout\` holds the name, release, state and phase
      and \`status\`, the status exactly as read.
      ${CLUSTER}
      ${EXITS}
    `,
    examples: [
      ['Show a rollout', '$0 rollout status fleet-v1-4-2'],
      ['Its status as JSON', '$0 rollout status fleet-v1-4-2 --json'],
      [
        'In another cluster of a kubeconfig',
        '$0 rollout status fleet-v1-4-2 --kubeconfig ./fleet.kubeconfig --context prod-eu',
      ],
    ],
  });

  override async execute(): Promise<number> {
    const control = await this.control();
    if (!control.ok) return this.failWith(control.failure);
    const view = await control.value.status(this.name);
    if (!view.ok) return this.failWith(view.failure);
    const { name, release, state, phase, resourceVersion, generation, status } = view.value;
    return this.succeed(
      { rollout: { name, release, state, phase, resourceVersion, generation, status } },
      renderRollout(view.value),
    );
  }
}

abstract class RolloutChangeCommand extends RolloutCommand {
  protected abstract readonly action: RolloutAction;

  override async execute(): Promise<number> {
    const control = await this.control();
    if (!control.ok) return this.failWith(control.failure);
    const change = await control.value.change(this.name, this.action);
    if (!change.ok) return this.failWith(change.failure);
    return this.succeed({ rollout: change.value }, [renderChange(change.value)]);
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
