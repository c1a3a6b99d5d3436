import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '../cli/golden');

/** Compares with test/cli/golden/NAME; `UPDATE_GOLDEN=1` writes it instead (a missing file fails). */
export function expectGolden(name: string, actual: string): void {
  const path = join(GOLDEN_DIR, name);
  if (process.env['UPDATE_GOLDEN'] === '1') {
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(path, actual);
  }
  expect(existsSync(path), `${name} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(actual).toBe(readFileSync(path, 'utf8'));
}
