/**
 * Command lines whose output depends on nothing but this build: the build records the CLI's
 * answers to them (scripts/write-fast-paths.mjs) and `bin/agent-upgrade` replays them without
 * loading the CLI. Exact argument lists only — anything else runs the CLI.
 */
export const FAST_PATH_ARGUMENTS: readonly (readonly string[])[] = [
  ['version'],
  ['version', '--json'],
  ['--version'],
  ['-v'],
  ['--help'],
  ['-h'],
  ['help'],
];
