/**
 * docs/configuration.md lists every key with its default: the tables must name exactly the keys
 * of the built-in profile, with the profile's values, and the examples must be accepted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkConfigText } from '../../src/app/node/config/parse-config.js';
import { FLEX_PROFILE } from '../../src/app/node/config/profiles.js';
import { PROBE_DEFAULTS } from '../../src/domain/node/health/probe-target.js';

const DOC = readFileSync(join(import.meta.dirname, '../../docs/configuration.md'), 'utf8');

/** Table rows whose first cell is a key in backticks: key → the default cell's first code span. */
function documentedDefaults(): Map<string, string> {
  const defaults = new Map<string, string>();
  for (const line of DOC.split('\n')) {
    const cells = line.split(/(?<!\\)\|/).map((cell) => cell.trim());
    const key = /^`([a-zA-Z.]+)`$/.exec(cells[1] ?? '')?.[1];
    const value = /`([^`]+)`/.exec(cells[3] ?? '')?.[1];
    if (key !== undefined && value !== undefined && cells.length === 6) defaults.set(key, value);
  }
  return defaults;
}

/** Every leaf of the profile by dotted key (arrays are leaves). */
function leaves(value: unknown, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value))
      for (const [path, leaf] of leaves(child, prefix === '' ? key : `${prefix}.${key}`)) out.set(path, leaf);
  } else {
    out.set(prefix, value);
  }
  return out;
}

/** The indented code blocks of the Examples section. */
function examples(): string[] {
  const section = DOC.slice(DOC.indexOf('\n## Examples'));
  const blocks: string[] = [];
  let current: string[] = [];
  for (const line of section.split('\n')) {
    if (line.startsWith('    ')) current.push(line.slice(4));
    else if (current.length > 0) {
      blocks.push(current.join('\n'));
      current = [];
    }
  }
  if (current.length > 0) blocks.push(current.join('\n'));
  return blocks;
}

/**
 * Keys of the optional `health.probe` section, which the profile leaves out: those with a default
 * are in the tables too, with it.
 */
const PROBE_KEY_DEFAULTS = new Map<string, unknown>([
  ...Object.entries(PROBE_DEFAULTS).map(([key, value]) => [`health.probe.${key}`, value] as const),
  ['health.probe.http.path', '/'],
]);

describe('docs/configuration.md', () => {
  const documented = documentedDefaults();
  const profile = new Map([...leaves(FLEX_PROFILE), ...PROBE_KEY_DEFAULTS]);

  it('documents exactly the keys of the flex profile, and of the optional health probe', () => {
    expect([...documented.keys()].sort()).toEqual([...profile.keys()].sort());
  });

  it.each([...profile.entries()])('gives the profile default of %s', (key, value) => {
    expect(JSON.parse(documented.get(key) ?? 'undefined')).toEqual(value);
  });

  it('shows examples the parser accepts', () => {
    const blocks = examples();
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(checkConfigText(block), block).toMatchObject({ ok: true });
  });
});
