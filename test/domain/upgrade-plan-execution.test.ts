import { describe, expect, it } from 'vitest';
import { planMigration, pointLink, type LayoutAction } from '../../src/domain/node/layout/migration-plan.js';
import { resolveLinkTarget } from '../../src/domain/node/layout/posix-path.js';
import { slotPath, type SlotLayout } from '../../src/domain/node/layout/slot-layout.js';
import { planActivation, type ActivationPlan } from '../../src/domain/node/activation/upgrade-plan.js';
import { flexLayout, TEXT, unwrap } from './layout-fixtures.js';
import {
  applyActions,
  buildHost,
  file,
  link,
  observe,
  resolveIn,
  runnableContent,
  tempNextTo,
  type Host,
  type HostSpec,
} from './layout-host-model.js';
import { LEGACY_CASES } from './upgrade-plan-cases-legacy.js';
import { MANAGED_CASES } from './upgrade-plan-cases-managed.js';
import { CHANGED, IDENTICAL, inputFor, install, lgGreen, managedOn, rows, sw, V } from './upgrade-plan-fixtures.js';

const CASES = [...LEGACY_CASES, ...MANAGED_CASES];

// ---------------------------------------------------------------------------------------------
// Executing a plan on the host model: the safety properties hold whatever the exact steps.

const SAFETY_HOSTS: readonly (readonly [string, (layout: SlotLayout) => HostSpec])[] = [
  ...CASES.map(([label, spec]) => [label, spec] as const),
  ['last-good names the green slot, which is missing', () => ({ ...managedOn('blue', lgGreen), green: null })],
  [
    'last-good names a non-executable green',
    () => ({ ...managedOn('blue', lgGreen), green: file('green-bin', false) }),
  ],
  ['last-good names the current link (reaches blue only through current)', () => managedOn('blue', link(TEXT.current))],
  [
    'last-good names the compatibility entry (reaches blue through entry → current)',
    (l) => managedOn('blue', link(l.entry)),
  ],
  [
    'managed host with a stale temp next to the green slot',
    (l) => ({ ...managedOn('blue', lgGreen), extra: { [tempNextTo(l.green)]: file('partial', false) } }),
  ],
];

function execute(layout: SlotLayout, host: Host, result: ActivationPlan): Host {
  let state = host;
  const set = (path: string, node: ReturnType<typeof file>): void => {
    const next = new Map(state);
    next.set(path, node);
    state = next;
  };
  for (const step of result.steps) {
    switch (step.kind) {
      case 'initialize-layout':
        state = applyActions(layout, state, step.actions);
        break;
      case 'remove-stale-temps':
        state = applyActions(
          layout,
          state,
          step.paths.map((path) => ({ kind: 'remove-stale-temp', path })),
        );
        break;
      case 'point-last-good': {
        const action = pointLink(layout, 'lastGood', slotPath(layout, step.slot));
        if (action.kind === 'point-link') set(action.link, link(action.text));
        break;
      }
      case 'install-candidate': {
        const target = slotPath(layout, step.slot);
        // I3: the active slot is never written while active.
        expect(resolveIn(state, layout.current)).not.toMatchObject({ path: target });
        // Last-good never leads to the slot being overwritten.
        expect(resolveIn(state, layout.lastGood)).not.toMatchObject({ path: target });
        set(target, file('candidate'));
        break;
      }
      case 'switch-current': {
        // Before the switch, last-good names the rollback slot itself (not via current).
        expect(directLinkTarget(state, layout.lastGood)).toBe(slotPath(layout, result.rollbackSlot));
        const action = pointLink(layout, 'current', slotPath(layout, step.slot));
        if (action.kind === 'point-link') set(action.link, link(action.text));
        break;
      }
      default:
        break;
    }
  }
  return state;
}

function migrationActionsOf(layout: SlotLayout, host: Host): readonly LayoutAction[] {
  return unwrap(planMigration(layout, observe(layout, host))).actions;
}

function directLinkTarget(host: Host, path: string): string | null {
  const node = host.get(path);
  return node?.type === 'symlink' ? resolveLinkTarget(path, node.text) : null;
}

describe('planActivation: executing the plan', () => {
  it.each(
    rows(
      SAFETY_HOSTS.flatMap(([label, spec]) => [
        [label, 'changed', spec, CHANGED] as const,
        [label, 'identical', spec, IDENTICAL] as const,
      ]),
    ),
  )('root %s: %s (%s candidate)', (root, _label, _kind, spec, options) => {
    const layout = flexLayout(root);
    const host = buildHost(layout, spec(layout));
    const result = unwrap(planActivation(inputFor(layout, host, options)));
    // The binary the host runs once the layout is converged: the one to roll back to.
    const before = runnableContent(applyActions(layout, host, migrationActionsOf(layout, host)), layout.current);
    expect(before).not.toBeNull();
    const after = execute(layout, host, result);

    // Current names the target slot directly and runs the candidate (or the unchanged binary).
    expect(directLinkTarget(after, layout.current)).toBe(slotPath(layout, result.targetSlot));
    expect(runnableContent(after, layout.current)).toBe(result.candidateChanged ? 'candidate' : before);
    // Last-good names the rollback slot directly, and that slot still runs the previous binary.
    expect(
      directLinkTarget(after, layout.lastGood) === slotPath(layout, 'blue') ||
        directLinkTarget(after, layout.lastGood) === slotPath(layout, 'green'),
    ).toBe(true);
    if (result.candidateChanged) {
      expect(directLinkTarget(after, layout.lastGood)).toBe(slotPath(layout, result.rollbackSlot));
      expect(runnableContent(after, layout.lastGood)).toBe(before);
    }
    // The compatibility entry leads to current; the layout needs nothing more.
    expect(directLinkTarget(after, layout.entry)).toBe(layout.current);
    expect(unwrap(planMigration(layout, observe(layout, after))).actions).toEqual([]);
  });

  it.each(rows(CASES))('root %s: %s — step order is the documented one', (root, _label, spec, options) => {
    const layout = flexLayout(root);
    const result = unwrap(planActivation(inputFor(layout, buildHost(layout, spec(layout)), options)));
    const ORDER = [
      'verify-candidate',
      'initialize-layout',
      'remove-stale-temps',
      'point-last-good:repair',
      'point-last-good:protect',
      'mark-activation',
      'install-candidate',
      'switch-current',
      'update-service-assets',
      'restart-service',
      'wait-healthy',
      'sync-container',
    ];
    const ranks = result.steps.map((step) =>
      ORDER.indexOf(step.kind === 'point-last-good' ? `${step.kind}:${step.why}` : step.kind),
    );
    expect(ranks.every((rank) => rank >= 0)).toBe(true);
    expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    expect(new Set(ranks).size).toBe(ranks.length);
    expect(result.steps[0]).toEqual(V);
    // Install and switch come as a pair, only for a changed candidate, and name the target.
    const installs = result.steps.filter((step) => step.kind === 'install-candidate');
    const switches = result.steps.filter((step) => step.kind === 'switch-current');
    expect(installs).toEqual(result.candidateChanged ? [install(result.targetSlot)] : []);
    expect(switches).toEqual(result.candidateChanged ? [sw(result.targetSlot)] : []);
    if (result.candidateChanged) expect(result.targetSlot).not.toBe(result.activeSlot);
    else expect(result.targetSlot).toBe(result.activeSlot);
    if (result.candidateChanged) expect(result.rollbackSlot).toBe(result.activeSlot);
  });
});
