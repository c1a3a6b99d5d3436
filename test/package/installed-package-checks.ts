// What test/package checks of an installed agent-upgrade: its `version`, its `demo` and the
// embedding example, each run from the installed files only.
import { existsSync } from 'node:fs';
import { copyExample, expectExampleRun } from '../support/embedding-example.js';
import { expect } from 'vitest';
import { run } from './package-harness.js';

interface DemoStep {
  readonly phase: string;
  readonly current: string | null;
  readonly lastGood: string | null;
  readonly running: string | null;
}

export const RUN_TIMEOUT_MS = 60_000;

/** Runs `bin version` from `cwd`, as JSON and as text, and expects `version`. */
export function expectVersion(bin: string, cwd: string, version: string): void {
  const json = run(bin, ['version', '--json'], { cwd, timeoutMs: RUN_TIMEOUT_MS });
  expect({ status: json.status, document: JSON.parse(json.stdout) as unknown }).toEqual({
    status: 0,
    document: { ok: true, version },
  });
  const plain = run(bin, ['version'], { cwd, timeoutMs: RUN_TIMEOUT_MS });
  // The line the candidate check of an upgrade reads.
  expect({ status: plain.status, lines: plain.stdout.trim().split('\n') }).toEqual({
    status: 0,
    lines: [`agent-upgrade ${version}`],
  });
}

/** Runs `bin demo` from `cwd`: migrate, upgrade, automatic rollback, and no sandbox left behind. */
export function expectDemo(bin: string, cwd: string): void {
  const demo = run(bin, ['demo', '--json'], { cwd, timeoutMs: RUN_TIMEOUT_MS });
  expect(demo.status).toBe(0);
  const { ok, demo: report } = JSON.parse(demo.stdout) as {
    ok: boolean;
    demo: { sandbox: string; kept: boolean; steps: DemoStep[] };
  };
  const slot = (path: string | null) => path?.replace(/^.*aks-flex-node-/, '') ?? null;
  expect({
    ok,
    kept: report.kept,
    steps: report.steps.map((step) => [slot(step.current), slot(step.lastGood)]),
  }).toEqual({
    ok: true,
    kept: false,
    steps: [
      [null, null],
      ['blue', 'blue'],
      ['blue', 'blue'],
      ['green', 'blue'],
      ['green', 'blue'],
      ['green', 'green'],
      ['green', 'green'],
    ],
  });
  expect(existsSync(report.sandbox)).toBe(false);
}

/** Runs examples/embedding.ts from `directory`, where `agent-upgrade` resolves to the installed package. */
export function expectExample(directory: string): void {
  copyExample(directory);
  expectExampleRun(run(process.execPath, ['embedding.ts'], { cwd: directory, timeoutMs: RUN_TIMEOUT_MS }));
}
