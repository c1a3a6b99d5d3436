#!/usr/bin/env node
// Fails when src/domain reaches for the clock, randomness, logging, the process, timers or
// decorators. Imports are policed by dependency-cruiser; these are globals it cannot see.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const forbidden = [
  [/\bDate\.now\s*\(/, 'reads the clock'],
  [/\bnew\s+Date\s*\(/, 'reads the clock'],
  [/\bperformance\./, 'reads the clock'],
  [/\bMath\.random\s*\(/, 'uses randomness'],
  [/\bcrypto\./, 'uses randomness or hashing from the runtime'],
  [/\bconsole\./, 'logs'],
  [/\bprocess\./, 'touches the process'],
  [/\b(setTimeout|setInterval|setImmediate|queueMicrotask)\s*\(/, 'schedules work'],
  [/^\s*@[A-Za-z]/m, 'uses a decorator'],
  [/\brequire\s*\(/, 'loads modules dynamically'],
  [/\bimport\s*\(/, 'loads modules dynamically'],
];

function walk(directory) {
  return readdirSync(directory).flatMap((name) => {
    const path = join(directory, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const problems = [];
for (const file of walk('src/domain')) {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/\/\/.*$/gm, '');
  for (const [pattern, what] of forbidden) {
    if (pattern.test(text)) problems.push(`${file}: ${what} (${pattern})`);
  }
}
if (problems.length > 0) {
  console.error(`src/domain must stay pure:\n${problems.join('\n')}`);
  process.exit(1);
}
console.log('src/domain purity: ok');
