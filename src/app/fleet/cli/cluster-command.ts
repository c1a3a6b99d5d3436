import { Option } from 'clipanion';
import { ExitCode } from '../../../domain/common/error-codes.js';
import { failure, type Result } from '../../../domain/common/failure.js';
import { isOneOf } from '../../../domain/common/one-of.js';
import { OutputCommand } from '../../common/cli/output-command.js';
import type { RolloutControl } from '../rollout/rollout-control.js';
import type { ClusterChoice, FleetCliContext } from './fleet-cli-context.js';

export const OUTPUT_FORMATS = ['text', 'wide', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * The fleet's commands: they reach the cluster only, with kubectl's options, and never read this
 * host's configuration or layout (no `--root`; the controller's own `--config` holds only its
 * signed-release settings).
 */
export abstract class ClusterCommand extends OutputCommand<FleetCliContext> {
  kubeconfig = Option.String('--kubeconfig', {
    description: 'Kubeconfig file (default: KUBECONFIG, the in-cluster service account, then ~/.kube/config)',
  });
  kubeContext = Option.String('--context', { description: 'The kubeconfig context to use (default: its current one)' });

  protected cluster(): ClusterChoice {
    return { kubeconfig: this.kubeconfig ?? null, context: this.kubeContext ?? null };
  }
}

/**
 * An operator's command on AgentRollouts or AgentReleases (docs/rollouts.md#the-operator-cli): it
 * prints one document, as text (`-o wide`: with more columns where there are some), JSON (`-o
 * json`, the same as `--json`) or YAML (`-o yaml`, the JSON document as YAML).
 */
export abstract class OperatorCommand extends ClusterCommand {
  output = Option.String('-o,--output', { description: `Output format: ${OUTPUT_FORMATS.join(', ')} (default text)` });
  private chosen: OutputFormat = 'text';

  /** The rollout use cases, once `--log-level` and `-o` are known to be valid. */
  protected async control(): Promise<Result<RolloutControl>> {
    const invalid = this.invalidLogLevel();
    if (invalid !== null) return { ok: false, failure: invalid };
    // An -o that names no format is refused even beside --json (which then prints the refusal).
    if (this.output !== undefined && !isOneOf(OUTPUT_FORMATS, this.output)) {
      const message = `-o must be one of ${OUTPUT_FORMATS.join(', ')} (got "${this.output.slice(0, 20)}")`;
      return { ok: false, failure: failure('E_USAGE', message) };
    }
    const format = this.json ? 'json' : (this.output ?? 'text');
    this.chosen = format;
    if (format === 'json') this.json = true;
    return { ok: true, value: await this.context.openRollouts(this.cluster()) };
  }

  protected get wide(): boolean {
    return this.chosen === 'wide';
  }

  /** JSON or YAML: stdout holds one document and nothing else. */
  protected get printsDocument(): boolean {
    return this.chosen === 'json' || this.chosen === 'yaml';
  }

  /** Prints a success in the chosen format; YAML is loaded only when asked for, as it costs every start. */
  protected async done(
    data: Record<string, unknown>,
    text: readonly string[],
    exitCode: ExitCode = ExitCode.ok,
  ): Promise<number> {
    if (this.chosen !== 'yaml') return this.succeed(data, text, exitCode);
    const { dump } = await import('js-yaml');
    this.context.stdout.write(dump({ ok: true, ...data }, { noRefs: true, lineWidth: -1 }));
    return exitCode;
  }
}
