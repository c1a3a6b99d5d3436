// A vitest reporter for scripts/test-times.mjs and scripts/steady-suite.mjs: one JSON line per
// test file, its whole duration (collection, hooks and tests, as the default reporter prints it),
// its test count and its state, written to the file FILE_TIMES_OUTPUT names.
import { writeFileSync } from 'node:fs';

export default class FileTimesReporter {
  files = [];

  onTestModuleEnd(testModule) {
    const tests = [...testModule.children.allTests()].length;
    this.files.push({
      name: testModule.moduleId,
      seconds: testModule.diagnostic().duration / 1000,
      tests,
      status: testModule.state(),
    });
  }

  onTestRunEnd() {
    const output = process.env['FILE_TIMES_OUTPUT'];
    if (output !== undefined) writeFileSync(output, JSON.stringify(this.files));
  }
}
