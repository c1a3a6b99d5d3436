import { describe, expect, it } from 'vitest';
import type { Result } from '../../src/domain/common/failure.js';
import { planMigration, pointLink } from '../../src/domain/node/layout/migration-plan.js';
import {
  planActivation,
  planManagedStaging,
  planRollback,
  type ActivationInput,
} from '../../src/domain/node/activation/upgrade-plan.js';
import { DIGEST_A, DIGEST_B, flexLayout, TEXT } from './layout-fixtures.js';
import { buildHost, dir, file, link, observe, special, type HostNode, type HostSpec } from './layout-host-model.js';

/**
 * A slot that is not a regular file blocks only what would use it: current is still repaired
 * from the other slot, and an install into it, a copy into it or a link to it is refused
 * (docs/operations.md#broken-slots).
 */
const layout = flexLayout();
const facts = (spec: HostSpec) => observe(layout, buildHost(layout, spec));
const codeOf = <T>(result: Result<T>): string | null => (result.ok ? null : result.failure.code);

const BROKEN: readonly (readonly [string, HostNode])[] = [
  ['a directory', dir()],
  ['a FIFO', special()],
  ['a symlink (an alias of green)', link(TEXT.green)],
  ['a dangling symlink', link('/nowhere')],
];

describe.each(BROKEN)('blue is %s', (_label, blue) => {
  const entry = link(TEXT.entryToCurrent);

  it('migrate repairs a dangling current from the valid green last-good, and nothing else', () => {
    const spec = { entry, blue, green: file('v1'), current: link('aks-flex-node-gone'), lastGood: link(TEXT.green) };
    expect(planMigration(layout, facts(spec))).toEqual({
      ok: true,
      value: {
        actions: [pointLink(layout, 'current', layout.green)],
        currentSlot: 'green',
        lastGoodSlot: 'green',
      },
    });
  });

  it('migrate copies a legacy binary into green, never into blue', () => {
    const plan = planMigration(layout, facts({ entry: file('legacy'), blue }));
    expect(plan.ok && plan.value.actions.filter((action) => action.kind === 'seed-slot')).toEqual([
      { kind: 'seed-slot', slot: 'green', source: layout.entry, target: layout.green, mode: 0o755 },
    ]);
  });

  it('migrate refuses (E_LAYOUT) a copy that only blue could take: last-good keeps green', () => {
    // Green is last-good but unfit to run (quarantined); the legacy file may not overwrite it.
    const spec = { entry: file('legacy'), blue, green: file('v1'), lastGood: link(TEXT.green) };
    expect(codeOf(planMigration(layout, facts(spec), new Set(['green'] as const)))).toBe('E_LAYOUT');
  });

  it('rollback from blue (current) to the green last-good goes ahead: it repairs current', () => {
    const spec = { entry, blue, green: file('v1'), current: link(TEXT.blue), lastGood: link(TEXT.green) };
    expect(planRollback(facts(spec))).toEqual({ ok: true, value: { from: 'blue', to: 'green' } });
  });

  it('an activation that would install into blue is refused (E_LAYOUT); an identical candidate is not', () => {
    const spec = { entry, blue, green: file('v1'), current: link(TEXT.green), lastGood: link(TEXT.green) };
    const input = (candidateDigest: typeof DIGEST_A): ActivationInput => ({
      layout,
      facts: facts(spec),
      candidateDigest,
      activeDigest: DIGEST_A,
      serviceAssetsCurrent: true,
      serviceActive: false,
      containerPresent: false,
      watchMs: 0,
    });
    expect(codeOf(planActivation(input(DIGEST_B)))).toBe('E_LAYOUT');
    expect(planActivation(input(DIGEST_A))).toMatchObject({ ok: true, value: { targetSlot: 'green' } });
  });

  it('a managed upgrade, whose candidate slot is blue, is refused (E_LAYOUT) before anything is recorded', () => {
    const spec = { entry, blue, green: file('v1'), current: link(TEXT.green), lastGood: link(TEXT.green) };
    expect(codeOf(planManagedStaging(facts(spec)))).toBe('E_LAYOUT');
  });
});

describe('rollback when current names a slot with no runnable binary', () => {
  it.each([
    ['missing', null],
    ['not executable', file('v0', false)],
  ])('blue %s: current goes to the green last-good', (_label, blue) => {
    const spec = { blue, green: file('v1'), current: link(TEXT.blue), lastGood: link(TEXT.green) };
    expect(planRollback(facts(spec))).toEqual({ ok: true, value: { from: 'blue', to: 'green' } });
  });

  it('still refuses (E_LAYOUT) a current that names no slot at all', () => {
    const spec = { green: file('v1'), current: link('/opt/agent'), lastGood: link(TEXT.green) };
    expect(codeOf(planRollback(facts(spec)))).toBe('E_LAYOUT');
  });
});
