import { Command, Option } from 'clipanion';
import { SystemClock } from '../../../adapters/common/runtime/system-clock.js';
import { ActivationCommandBase } from './activate-command.js';
import { clockTicker, ProgressBar } from './progress-bar.js';
import { renderPreflight } from './render-activation.js';

/** A terminal's progress bar paces its redraws and its rate on real time. */
const CLOCK = new SystemClock();

export class InstallCommand extends ActivationCommandBase {
  static override paths = [['install']];

  static override usage = Command.Usage({
    description: 'Download a release archive and activate its binary (fetch + activate, under one lock).',
    details: `
      Runs the same pipeline as \`fetch\` into a private file in the slot directory, then the
      same activation as \`activate\`: candidate checks, install into the inactive slot, switch,
      restart, health check, and rollback on failure. \`--version\` names the version the
      binary must report. With \`--preflight\` the request is validated and the plan printed;
      nothing is downloaded or changed.

      The request is validated, a pending managed upgrade refused, and the archive downloaded and
      its binary checked before the host is touched. On a terminal (not with \`--json\`) the
      download's progress bar is followed by a line naming the health wait, as for \`activate\`.
      Exit codes: 0 installed, 1 failed with nothing changed, 2 invalid input, 3 failed and rolled
      back, 4 busy (lock held or managed upgrade pending), 5 changed and then failed.
    `,
    examples: [
      [
        'Install a release',
        'sudo $0 install --url https://example.com/aks-flex-node-linux-amd64.tar.gz --sha256 0123…cdef --version 1.4.2',
      ],
      ['Show the plan first', 'sudo $0 install --url https://example.com/aks-flex-node-linux-amd64.tar.gz --preflight'],
    ],
  });

  url = Option.String('--url', { required: true, description: 'Release archive URL (http or https)' });
  sha256 = Option.String('--sha256', { description: 'Expected SHA-256 of the compressed archive' });

  override async execute(): Promise<number> {
    const upgrader = await this.openUpgrader();
    if (!upgrader.ok) return this.failWith(upgrader.failure);
    const request = {
      url: this.url,
      sha256: this.sha256,
      requestedVersion: this.version,
      allowDowngrade: this.allowDowngrade,
      force: this.force,
    };
    if (this.preflight) {
      const plan = await upgrader.value.previewInstall(request);
      return plan.ok
        ? this.succeed({ preflight: plan.value }, renderPreflight(plan.value))
        : this.failWith(plan.failure);
    }
    const stderr = this.context.stderr as NodeJS.WriteStream;
    const result = await this.interruptible(async (signal) => {
      // Erased by an interrupt at once, not only when the rollback it starts has finished.
      const progress =
        !this.json && stderr.isTTY === true
          ? new ProgressBar(stderr, () => CLOCK.monotonicMs(), signal, clockTicker(CLOCK))
          : null;
      try {
        return await this.withHealthLine(upgrader.value.config.agent.name, signal, (onHealthProgress) =>
          upgrader.value.install({
            ...request,
            signal,
            onHealthProgress,
            ...(progress === null
              ? {}
              : { onProgress: (bytes: number, total: number | null) => progress.update(bytes, total) }),
          }),
        );
      } finally {
        progress?.finish();
      }
    });
    return this.reportActivation(result);
  }
}
