import { copyFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');
/** The files of the embedding example, which an embedder copies as they are. */
export const EXAMPLE_FILES = ['embedding.ts', 'pidfile-service-manager.ts'];

/** What examples/embedding.ts prints: the migration, an activation, a rollback that is a failure. */
export const EXAMPLE_OUTPUT = [
  'migrated: 5 actions',
  'activated 1.1.0: blue -> green (activated)',
  'v1.2.0 refused: E_UNHEALTHY, rolled-back',
  'current -> green, last-good -> green, the agent runs my-agent-green',
];

/** Copies the example into `directory`, where `agent-upgrade` resolves to the package under test. */
export function copyExample(directory: string): void {
  for (const file of EXAMPLE_FILES) copyFileSync(join(EXAMPLES, file), join(directory, file));
}

/**
 * The example's run: exit 0, its lines, and stderr holding only the default logger's JSON lines
 * (the embedder passed no logger), one of them the rolled-back activation's error.
 */
export function expectExampleRun(run: { status: number | null; stdout: string; stderr: string }): void {
  expect({ status: run.status, stdout: run.stdout.trim().split('\n') }).toEqual({ status: 0, stdout: EXAMPLE_OUTPUT });
  const entries = run.stderr
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { name?: string; level?: number; code?: string });
  expect(entries.every((entry) => entry.name === 'agent-upgrade')).toBe(true);
  expect(entries.filter((entry) => (entry.level ?? 0) >= 50).map((entry) => entry.code)).toEqual(['E_UNHEALTHY']);
}
