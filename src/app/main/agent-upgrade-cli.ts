import { Cli } from 'clipanion';
import type { ProgramContext } from './program-context.js';
import type { CommandSyntax } from '../common/cli/usage-diagnosis.js';

/** What each value-taking option's value is, as help shows it (`--config FILE`). */
const PLACEHOLDERS: Readonly<Record<string, string>> = {
  '--config': 'FILE',
  '--root': 'DIR',
  '--log-level': 'LEVEL',
  '--url': 'URL',
  '--sha256': 'HEX',
  '--member': 'NAME',
  '--output': 'FILE',
  '--version': 'VERSION',
  '--signed-target': 'PATH',
  '--message': 'TEXT',
  '--failed-run': 'ID',
  '--kubeconfig': 'FILE',
  '--context': 'NAME',
  '--namespace': 'NAME',
  '--events-namespace': 'NAME',
  '--identity': 'NAME',
  '--lease-name': 'NAME',
  '--lease-duration': 'DURATION',
  '--renew-deadline': 'DURATION',
  '--retry-period': 'DURATION',
  '--resync': 'DURATION',
  '--metrics-address': 'ADDRESS',
  '--kube-api-qps': 'QPS',
  '--kube-api-burst': 'COUNT',
  // The fleet's `-o,--output` is kubectl's output format; fetch's `--output` is a file.
  '-o,--output': 'FORMAT',
  '--reason': 'TEXT',
  '--timeout': 'SECONDS',
};

type UsageOptions = { detailed?: boolean; inlineOptions?: boolean };
type Usage = { usage: string; options: { definition: string; description: string; required: boolean }[] };

/**
 * The clipanion Cli with two additions: help names option values (`--url URL`, not clipanion's
 * `--url #0`), and the registered syntax is exposed so a parse failure can be explained
 * precisely (usage-diagnosis.ts) instead of as clipanion's "Command not found".
 */
export class AgentUpgradeCli extends Cli<ProgramContext> {
  // Every usage line, option table and error usage goes through here, so one rewrite covers
  // them all; the option table is padded after this, so its columns stay aligned.
  protected override getUsageByIndex(n: number, opts?: UsageOptions): Usage {
    const { usage, options } = super.getUsageByIndex(n, opts);
    return {
      usage: withPlaceholders(usage),
      options: options.map((option) => ({ ...option, definition: withPlaceholders(option.definition) })),
    };
  }

  /** Every registered command's paths, options and positionals, in registration order. */
  syntax(): CommandSyntax[] {
    return [...this.registrations.values()].map(({ builder }) => ({
      paths: builder.paths.map((path) => [...path]),
      usage: builder.paths.length === 0 ? null : withPlaceholders(builder.usage({ detailed: true }).usage),
      options: builder.options.map((option) => ({
        names: [...option.names],
        arity: option.arity,
        required: option.required,
      })),
      positionals: {
        required: [...builder.arity.leading, ...builder.arity.trailing],
        optional: Array.isArray(builder.arity.extra) ? [...builder.arity.extra] : [],
        unlimited: !Array.isArray(builder.arity.extra),
      },
    }));
  }
}

/** `--config #0` → `--config FILE`; the value's name comes from the option's long name. */
export function withPlaceholders(text: string): string {
  return text.replace(/(-[\w-]+(?:,-[\w-]+)*)((?: #\d+)+)/g, (_match, names: string) => {
    const long = names.split(',').at(-1) ?? names;
    return `${names} ${PLACEHOLDERS[names] ?? PLACEHOLDERS[long] ?? 'VALUE'}`;
  });
}
