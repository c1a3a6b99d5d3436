import { describe, expect, it } from 'vitest';
import { planMigration, type MigrationPlan } from '../../src/domain/node/layout/migration-plan.js';
import { resolveLinkTarget } from '../../src/domain/node/layout/posix-path.js';
import { slotPath, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import { flexLayout, unwrap } from './layout-fixtures.js';
import {
  applyAction,
  applyActions,
  buildHost,
  dir,
  observe,
  resolveIn,
  runnableContent,
  staleTempsIn,
  type Host,
} from './layout-host-model.js';
import { LEGACY_CASES } from './migration-cases-legacy.js';
import { MANAGED_CASES } from './migration-cases-managed.js';
import { rows } from './migration-fixtures.js';

const CASES = [...LEGACY_CASES, ...MANAGED_CASES];

describe('planMigration: applying the plan', () => {
  function apply(layout: SlotLayout, host: Host): { plan: MigrationPlan; host: Host } {
    const plan = unwrap(planMigration(layout, observe(layout, host)));
    return { plan, host: applyActions(layout, host, plan.actions) };
  }

  it.each(rows(CASES))('root %s: %s — idempotent: the applied plan plans nothing more', (root, _label, spec) => {
    const layout = flexLayout(root);
    const first = apply(layout, buildHost(layout, spec(layout)));
    const second = unwrap(planMigration(layout, observe(layout, first.host)));
    expect(second).toEqual({ actions: [], currentSlot: first.plan.currentSlot, lastGoodSlot: first.plan.lastGoodSlot });
  });

  it.each(rows(CASES))('root %s: %s — converged host is fully managed', (root, _label, spec) => {
    const layout = flexLayout(root);
    const { plan, host } = apply(layout, buildHost(layout, spec(layout)));
    expect(host.get(layout.slotDir)).toEqual(dir());
    expect(staleTempsIn(layout, host)).toEqual([]);
    expect(resolveIn(host, layout.current)).toEqual({
      kind: 'file',
      path: slotPath(layout, plan.currentSlot),
      executable: true,
    });
    expect(resolveIn(host, layout.lastGood)).toEqual({
      kind: 'file',
      path: slotPath(layout, plan.lastGoodSlot),
      executable: true,
    });
    const entry = host.get(layout.entry);
    expect(entry?.type).toBe('symlink');
    if (entry?.type === 'symlink') expect(resolveLinkTarget(layout.entry, entry.text)).toBe(layout.current);
    expect(runnableContent(host, layout.entry)).toBe(runnableContent(host, layout.current));
  });

  it.each(rows(CASES))('root %s: %s — crash after any action converges to the same host', (root, _label, spec) => {
    const layout = flexLayout(root);
    const start = buildHost(layout, spec(layout));
    const full = apply(layout, start);
    let host = start;
    for (const action of full.plan.actions) {
      host = applyAction(layout, host, action);
      const resumed = apply(layout, host);
      expect(resumed.plan.currentSlot).toBe(full.plan.currentSlot);
      expect(resumed.host).toEqual(full.host);
    }
  });

  it.each(rows(CASES))('root %s: %s — the binary the host ran keeps running at every step', (root, _label, spec) => {
    const layout = flexLayout(root);
    const start = buildHost(layout, spec(layout));
    const plan = unwrap(planMigration(layout, observe(layout, start)));
    // What the host runs now: current if it leads anywhere runnable, else the entry.
    const running = runnableContent(start, layout.current) ?? runnableContent(start, layout.entry);
    let host = start;
    for (const action of plan.actions) {
      host = applyAction(layout, host, action);
      const runs = runnableContent(host, layout.current) ?? runnableContent(host, layout.entry);
      expect(runs).not.toBeNull();
    }
    if (running !== null && plan.actions.some((action) => action.kind === 'seed-slot')) {
      expect(runnableContent(host, layout.current)).toBe(running);
    }
  });

  it.each(rows(CASES))('root %s: %s — a legacy entry file is copied before it is replaced', (root, _label, spec) => {
    const layout = flexLayout(root);
    const start = buildHost(layout, spec(layout));
    const plan = unwrap(planMigration(layout, observe(layout, start)));
    const seedAt = plan.actions.findIndex((action) => action.kind === 'seed-slot');
    const entryAt = plan.actions.findIndex((action) => action.kind === 'point-link' && action.role === 'entry');
    const currentAt = plan.actions.findIndex((action) => action.kind === 'point-link' && action.role === 'current');
    const lastGoodAt = plan.actions.findIndex((action) => action.kind === 'point-link' && action.role === 'lastGood');
    if (seedAt >= 0 && entryAt >= 0) expect(seedAt).toBeLessThan(entryAt);
    if (seedAt >= 0) expect(currentAt).toBeGreaterThan(seedAt);
    if (currentAt >= 0 && entryAt >= 0) expect(currentAt).toBeLessThan(entryAt);
    if (currentAt >= 0 && lastGoodAt >= 0) expect(currentAt).toBeLessThan(lastGoodAt);
    const legacy = start.get(layout.entry)?.type === 'file' ? runnableContent(start, layout.entry) : null;
    if (legacy !== null) {
      // The legacy entry stays runnable after every action; when it is the seed source, with the
      // same bytes, and current ends up running those bytes.
      const seedsFromEntry = plan.actions.some(
        (action) => action.kind === 'seed-slot' && action.source === layout.entry,
      );
      let host = start;
      for (const action of plan.actions) {
        host = applyAction(layout, host, action);
        const stillRuns = runnableContent(host, layout.entry);
        expect(stillRuns).not.toBeNull();
        if (seedsFromEntry) expect(stillRuns).toBe(legacy);
      }
      if (seedsFromEntry) expect(runnableContent(host, layout.current)).toBe(legacy);
    }
  });
});
