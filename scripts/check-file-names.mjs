#!/usr/bin/env node
// Fails when two files under src/ share a name: a name says which file it is, wherever it is
// imported from or shown (stack traces, coverage, editor tabs).
import { readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';

function walk(directory) {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const byName = new Map();
for (const file of walk('src')) byName.set(basename(file), [...(byName.get(basename(file)) ?? []), file]);
const shared = [...byName.values()].filter((files) => files.length > 1);
if (shared.length > 0) {
  console.error(`files under src/ share a name:\n${shared.map((files) => `  ${files.join(', ')}`).join('\n')}`);
  process.exit(1);
}
console.log(`src file names: ${byName.size} files, none shared`);
