// A vitest reporter (vitest.config.ts registers it for every run): each test file's whole
// duration (collection, hooks and tests, as the default reporter prints it), its test count and
// its state. With FILE_TIMES_OUTPUT it writes them as JSON to that file (scripts/test-times.mjs,
// scripts/steady-suite.mjs); with FILE_TIMES_TABLE=N it prints the N slowest files as a Markdown
// table at the end of the run (.ci/run does, so every CI log shows where the time went).
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

export default class FileTimesReporter {
  files = [];
  /** Per group (vitest project): when its first file started and its last one ended, in ms. */
  groups = new Map();

  onTestModuleStart(testModule) {
    const group = this.groupOf(testModule);
    group.startMs = Math.min(group.startMs, Date.now());
  }

  onTestModuleEnd(testModule) {
    const tests = [...testModule.children.allTests()].length;
    this.files.push({
      name: testModule.moduleId,
      group: testModule.project.name,
      seconds: testModule.diagnostic().duration / 1000,
      tests,
      status: testModule.state(),
    });
    const group = this.groupOf(testModule);
    group.endMs = Math.max(group.endMs, Date.now());
    group.files += 1;
  }

  groupOf(testModule) {
    const name = testModule.project.name || 'default';
    if (!this.groups.has(name)) this.groups.set(name, { startMs: Infinity, endMs: -Infinity, files: 0 });
    return this.groups.get(name);
  }

  onTestRunEnd() {
    const output = process.env['FILE_TIMES_OUTPUT'];
    if (output !== undefined) writeFileSync(output, JSON.stringify(this.files));
    const top = Number(process.env['FILE_TIMES_TABLE'] ?? 0);
    if (Number.isInteger(top) && top > 0) console.log(`${groupTable(this.groups)}\n${slowestTable(this.files, top)}`);
  }
}

/** Each group's wall time, first file's start to last file's end (the groups run one after another). */
function groupTable(groups) {
  const rows = [...groups].map(
    ([name, group]) => `| ${name} | ${group.files} | ${((group.endMs - group.startMs) / 1000).toFixed(0)} s |`,
  );
  return ['\n| group | files | wall |', '|---|---:|---:|', ...rows].join('\n');
}

/** The slowest `top` files as Markdown, after the sum of every file's time. */
function slowestTable(files, top) {
  const sorted = [...files].sort((a, b) => b.seconds - a.seconds);
  const sumS = sorted.reduce((sum, file) => sum + file.seconds, 0);
  const rows = sorted
    .slice(0, top)
    .map(
      (file) =>
        `| ${relative(process.cwd(), file.name)} | ${file.tests} | ${file.seconds.toFixed(1)} s${file.status === 'passed' ? '' : ` (${file.status})`} |`,
    );
  return [
    `\n${files.length} files, sum of file times ${sumS.toFixed(0)} s; the slowest:\n`,
    '| file | tests | time |',
    '|---|---:|---:|',
    ...rows,
  ].join('\n');
}
