/**
 * The manual page names every command the CLI registers, aliases included: the list comes from
 * the CLI itself (createCli().syntax()), so a new command without a man-page entry fails here.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCli } from '../../src/app/main/create-cli.js';

const REPO = resolve(import.meta.dirname, '../..');
/** The page as text: font escapes dropped, `\-` as `-`. */
const page = readFileSync(resolve(REPO, 'man/man8/agent-upgrade.8'), 'utf8')
  .replace(/\\f[BIRP]/g, '')
  .replace(/\\-/g, '-');
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('man/man8/agent-upgrade.8', () => {
  const paths = createCli()
    .syntax()
    .flatMap((command) => command.paths.map((path) => path.join(' ')));

  it('finds the registered commands', () => {
    expect(paths).toEqual(expect.arrayContaining(['status', 'daemon', 'agent', 'controller', 'rollout status']));
  });

  it('names every registered command path', () => {
    const missing = paths.filter((path) => !new RegExp(`(^|[\\s"(,|])${escape(path)}(?=$|[\\s",)|])`, 'm').test(page));
    expect(missing).toEqual([]);
  });
});
