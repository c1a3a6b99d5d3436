// A vitest sequencer (vitest.config.ts): the files known to take longest start first, then the
// rest in vitest's own order. Vitest orders by the durations it cached in node_modules, which a
// clean clone (CI) does not have: it falls back to file size, and a small file that runs a long
// simulation could start last and leave its group waiting on it alone. Longest first keeps each
// group's workers busy to the end. The list comes from the slowest-files table every run prints.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Slowest first (docs/testing.md has the table these come from). */
const LONG_POLES = [
  'test/sim/fleet/fleet-crash.test.ts',
  'test/package/npm-pack.test.ts',
  'test/systemd/managed-kill.test.ts',
  'test/kube-real/rollout-e2e.test.ts',
  'test/systemd/sea-self-hosting.test.ts',
  'test/systemd/service-manager.contract.test.ts',
  'test/e2e/daemon.test.ts',
  'test/systemd/managed-path.test.ts',
  'test/kube-real/credentials.test.ts',
  'test/systemd/direct-path.test.ts',
  'test/sim/fleet/fleet-crash-rollback.test.ts',
  'test/sim/fleet/fleet-overlap.test.ts',
  'test/kube-real/conformance.test.ts',
  'test/sim/layout-crash-points.test.ts',
  'test/load/daemon-load.test.ts',
];

export class LongPolesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const ordered = await super.sort(files);
    const rank = (file: TestSpecification): number => {
      const at = LONG_POLES.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return at < 0 ? LONG_POLES.length : at;
    };
    return ordered
      .map((file, index) => ({ file, index }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}
