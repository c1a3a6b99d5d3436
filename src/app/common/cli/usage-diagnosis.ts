import { redactUrlsInText } from '../../../domain/common/redacted-url.js';

export interface OptionSyntax {
  readonly names: readonly string[];
  /** How many values follow the option (0 for a flag). */
  readonly arity: number;
  readonly required: boolean;
}

/** One registered command as the parser sees it (from AgentUpgradeCli.syntax()). */
export interface CommandSyntax {
  readonly paths: readonly (readonly string[])[];
  /** The one-line usage with placeholders; null for the default command. */
  readonly usage: string | null;
  readonly options: readonly OptionSyntax[];
  readonly positionals: {
    readonly required: readonly string[];
    readonly optional: readonly string[];
    readonly unlimited: boolean;
  };
}

/** Why a command line does not parse, said the way an operator fixes it. */
export interface UsageProblem {
  readonly message: string;
  /** The nearest known command or option to a misspelt one. */
  readonly suggestion?: string;
  /** Required options or arguments that were not given. */
  readonly missing?: readonly string[];
  /** The command the line addressed, when that much was clear. */
  readonly command: CommandSyntax | null;
}

/** Clipanion answers these itself on any command, so they are never unknown. */
const HELP_OPTIONS: readonly OptionSyntax[] = [{ names: ['-h', '--help'], arity: 0, required: false }];
/** How far a misspelling may be from what was meant (as kubectl's command suggestions). */
const SUGGESTION_DISTANCE_MAX = 2;
/** A quoted token is cut here: the message is about the mistake, not a copy of the input. */
const QUOTED_CHARS_MAX = 40;

/**
 * Explains a command line the parser refused: an unknown command (with the nearest one), an
 * unknown option, an option without its value, a missing required option or argument, an extra
 * argument. Null when none of these applies (the parser's own message is used then).
 */
export function diagnoseUsage(commands: readonly CommandSyntax[], argv: readonly string[]): UsageProblem | null {
  // Builtin paths such as `--version` look like flags; a command's own option of that name wins.
  const dashedPaths = commands.flatMap((command) =>
    command.paths.filter((path) => path.length === 1 && path[0]?.startsWith('-') === true),
  );
  const everyOption = [
    ...dashedPaths.map((path) => ({ names: path, arity: 0, required: false })),
    ...HELP_OPTIONS,
    ...commands.flatMap((command) => command.options),
  ];
  const first = scanLine(argv, everyOption);
  const command = findCommand(commands, first.words);
  if (command === null) {
    if (first.words.length > 0) return unknownCommand(commands, first.words);
    return first.problem === null
      ? { message: 'a command is required', command: null }
      : { ...first.problem, command: null };
  }
  const scan = scanLine(argv, [...HELP_OPTIONS, ...command.command.options]);
  if (scan.problem !== null) return { ...scan.problem, command: command.command };
  const missingOptions = command.command.options
    .filter((option) => option.required && !option.names.some((name) => scan.seen.has(name)))
    .map(longName);
  if (missingOptions.length > 0) {
    return {
      message: `required option${missingOptions.length === 1 ? '' : 's'} ${missingOptions.join(', ')}`,
      missing: missingOptions,
      command: command.command,
    };
  }
  const { required, optional, unlimited } = command.command.positionals;
  const given = scan.words.slice(command.pathLength);
  if (given.length < required.length) {
    const missing = required.slice(given.length);
    return {
      message: `missing argument${missing.length === 1 ? '' : 's'} ${missing.join(', ')}`,
      missing,
      command: command.command,
    };
  }
  const extra = given[required.length + optional.length];
  if (!unlimited && extra !== undefined)
    return { message: `unexpected argument ${quote(extra)}`, command: command.command };
  return null;
}

interface Scan {
  readonly words: readonly string[];
  readonly seen: ReadonlySet<string>;
  readonly problem: Omit<UsageProblem, 'command'> | null;
}

/** Splits a line into words and options, stopping at the first option problem. */
function scanLine(argv: readonly string[], options: readonly OptionSyntax[]): Scan {
  const byName = new Map(options.flatMap((option) => option.names.map((name) => [name, option] as const)));
  const words: string[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < argv.length; index += 1) {
    const token = argv[index] as string;
    if (token === '--') {
      words.push(...argv.slice(index + 1));
      break;
    }
    if (!token.startsWith('-') || token === '-') {
      words.push(token);
      continue;
    }
    const equals = token.indexOf('=');
    const name = equals === -1 ? token : token.slice(0, equals);
    const option = byName.get(name) ?? negated(byName, name);
    if (option === undefined) {
      const longNames = [...new Set(options.map(longName))];
      return { words, seen, problem: withSuggestion(`unknown option ${quote(name)}`, name, longNames, null) };
    }
    for (const known of option.names) seen.add(known);
    if (option.arity === 0 && equals !== -1)
      return { words, seen, problem: { message: `option ${longName(option)} takes no value` } };
    if (option.arity > 0 && equals === -1) {
      const values = argv.slice(index + 1, index + 1 + option.arity);
      // The parser never takes a value that looks like an option (`--url --output x`).
      if (values.length < option.arity || values.some((value) => value.startsWith('-'))) {
        return { words, seen, problem: { message: `option ${longName(option)} needs a value` } };
      }
      index += option.arity;
    }
  }
  return { words, seen, problem: null };
}

/** `--no-json` is the parser's negation of the flag `--json`. */
function negated(byName: ReadonlyMap<string, OptionSyntax>, name: string): OptionSyntax | undefined {
  if (!name.startsWith('--no-')) return undefined;
  const flag = byName.get(`--${name.slice('--no-'.length)}`);
  return flag?.arity === 0 ? flag : undefined;
}

function findCommand(
  commands: readonly CommandSyntax[],
  words: readonly string[],
): { command: CommandSyntax; pathLength: number } | null {
  let best: { command: CommandSyntax; pathLength: number } | null = null;
  for (const command of commands) {
    for (const path of command.paths) {
      if (path.length === 0 || path.some((segment, index) => words[index] !== segment)) continue;
      if (best === null || path.length > best.pathLength) best = { command, pathLength: path.length };
    }
  }
  return best;
}

/**
 * A line whose first words name no command. A misspelling is looked for among the commands of
 * as many words as it has (`rollout stauts` → `rollout status`, `relase quarantine` → `release
 * quarantine`); a group named alone (`rollout`) lists its commands.
 */
function unknownCommand(commands: readonly CommandSyntax[], words: readonly string[]): UsageProblem {
  const paths = commands.flatMap((command) => command.paths).filter((path) => path.length > 0);
  const subcommands = paths.filter((path) => path.length > 1 && path[0] === words[0]).map((path) => path.slice(1));
  if (subcommands.length > 0 && words.length === 1) {
    const names = [...new Set(subcommands.map((path) => path.join(' ')))];
    return { message: `${quote(words[0] ?? '')} needs one of its commands: ${names.join(', ')}`, command: null };
  }
  let best: { readonly name: string; readonly words: number; readonly distance: number } | null = null;
  for (const path of paths) {
    if (words.length < path.length) continue;
    const phrase = words.slice(0, path.length).join(' ');
    const name = path.join(' ');
    const distance = editDistance(phrase.toLowerCase(), name.toLowerCase());
    if (distance > SUGGESTION_DISTANCE_MAX || distance >= phrase.length) continue;
    if (best === null || distance < best.distance || (distance === best.distance && name < best.name))
      best = { name, words: path.length, distance };
  }
  const shown = words.slice(0, best?.words ?? (subcommands.length > 0 ? 2 : 1)).join(' ');
  return best === null
    ? { message: `unknown command ${quote(shown)}`, command: null }
    : {
        message: `unknown command ${quote(shown)}; did you mean ${quote(best.name)}?`,
        suggestion: best.name,
        command: null,
      };
}

function withSuggestion(
  message: string,
  word: string,
  candidates: readonly string[],
  command: CommandSyntax | null,
): UsageProblem {
  const suggestion = closest(word, candidates);
  return suggestion === null
    ? { message, command }
    : { message: `${message}; did you mean ${quote(suggestion)}?`, suggestion, command };
}

/** The candidate nearest to `word`, if it is close enough to be a misspelling of it. */
export function closest(word: string, candidates: readonly string[]): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const name of candidates) {
    const distance = editDistance(word.toLowerCase(), name.toLowerCase());
    if (distance > SUGGESTION_DISTANCE_MAX || distance >= word.length) continue;
    if (best === null || distance < best.distance || (distance === best.distance && name < best.name))
      best = { name, distance };
  }
  return best?.name ?? null;
}

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and transpositions
 * of neighbours each cost 1, so `stauts` is 1 from `status`.
 */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let distance = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        distance = Math.min(distance, at(i - 2, j - 2) + 1);
      (rows[i] as number[])[j] = distance;
    }
  }
  return at(a.length, b.length);
}

function longName(option: OptionSyntax): string {
  return option.names.at(-1) ?? '';
}

/** A token from the command line, safe to print: redacted, cut, and with controls escaped. */
function quote(token: string): string {
  const redacted = redactUrlsInText(token);
  return JSON.stringify(redacted.length > QUOTED_CHARS_MAX ? `${redacted.slice(0, QUOTED_CHARS_MAX)}…` : redacted);
}
