// The Grafana dashboard and the alerts of deploy/monitoring/ must speak of what the controller
// really exports (names, types, labels, label values, read from the real metrics adapter so they
// cannot drift apart), the alerts must be a well-formed PrometheusRule whose runbooks exist, and
// promtool must accept the rules and pass their unit tests.

import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dump, load, loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROLLOUT_PHASES } from '../../src/domain/fleet/status/rollout-status.js';
import { exportedMetrics, headingAnchors, promqlProblems, promtool, type MetricFamily } from './monitoring-support.js';

const REPO = join(import.meta.dirname, '../..');
const MONITORING = join(REPO, 'deploy/monitoring');
const RUNBOOKS = 'https://github.com/agent-upgrade/agent-upgrade/blob/main/docs/rollouts.md#';
const ALERTS = [
  'AgentRolloutHalted',
  'AgentUpgradeControllerNotLeading',
  'AgentUpgradeReconcileErrors',
  'AgentUpgradeOperationsStuckPending',
  'AgentUpgradeTrustMetadataExpiring',
];

interface Target {
  readonly expr: string;
  readonly datasource?: { readonly uid?: string };
}
interface Panel {
  readonly title: string;
  readonly datasource?: { readonly uid?: string };
  readonly targets?: readonly Target[];
  readonly panels?: readonly Panel[];
}
interface Variable {
  readonly name: string;
  readonly type: string;
  readonly query?: string | { readonly query?: string };
}
interface Dashboard {
  readonly schemaVersion: number;
  readonly templating: { readonly list: readonly Variable[] };
  readonly panels: readonly Panel[];
}
interface Rule {
  readonly alert?: string;
  readonly expr?: unknown;
  readonly for?: unknown;
  readonly labels?: Record<string, unknown>;
  readonly annotations?: Record<string, unknown>;
}
interface PrometheusRule {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly spec: { readonly groups: readonly { readonly name: string; readonly rules: readonly Rule[] }[] };
}

const dashboard = JSON.parse(readFileSync(join(MONITORING, 'grafana-dashboard.json'), 'utf8')) as Dashboard;
const prometheusRule = load(readFileSync(join(MONITORING, 'prometheus-rules.yaml'), 'utf8')) as PrometheusRule;
const rules = prometheusRule.spec.groups.flatMap((group) => group.rules);
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
const queries = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel, target })));
const expressions = [
  ...queries.map(({ panel, target }) => [`panel "${panel.title}"`, target.expr] as const),
  ...rules.map((rule) => [`alert ${String(rule.alert)}`, String(rule.expr)] as const),
];

/** Grafana's variables as a query would run: any rollout, the default rate interval. */
const asRun = (expr: string): string =>
  expr.replace(/\$__rate_interval|\$\{__rate_interval\}/g, '5m').replace(/\$\{?rollout\}?/g, '.*');

describe('deploy/monitoring', () => {
  let exported: Map<string, MetricFamily>;
  beforeAll(async () => {
    exported = await exportedMetrics();
  });

  describe('what the dashboard and the alerts query', () => {
    it('is read from a full exercise of the adapter: every family has series, every phase and outcome shows', () => {
      expect(exported.size).toBeGreaterThan(0);
      expect([...exported].filter(([, family]) => family.samples === 0).map(([name]) => name)).toEqual([]);
      const values = (name: string, label: string): string[] => [...(exported.get(name)?.values.get(label) ?? [])];
      expect(values('agent_upgrade_rollout_phase', 'phase').sort()).toEqual([...ROLLOUT_PHASES].sort());
      expect(values('agent_upgrade_reconcile_duration_seconds', 'outcome').sort()).toEqual([
        'applied',
        'conflict',
        'error',
      ]);
    });

    it('is checked by a reader that finds what is wrong (the reader itself)', () => {
      const problems = (expr: string): number => promqlProblems(expr, exported).length;
      expect(problems('sum by (le) (rate(agent_upgrade_reconcile_duration_seconds_bucket[5m]))')).toBe(0);
      expect(problems('sum(rate(agent_upgrade_rollout_halts_total[1h])) by (rollout, reason)')).toBe(0);
      expect(
        problems('max by (rollout) (agent_upgrade_rollout_phase and on (instance) agent_upgrade_controller_leader)'),
      ).toBe(0);
      expect(problems('agent_upgrade_rollout_phases')).toBe(1);
      expect(problems('agent_upgrade_reconcile_duration_seconds')).toBe(1);
      expect(problems('rate(agent_upgrade_api_requests_total_count[5m])')).toBe(1);
      expect(problems('sum by (reason) (agent_upgrade_rollout_machines)')).toBe(1);
      expect(problems('sum(agent_upgrade_api_requests_total) by (rollout)')).toBe(1);
      expect(problems('sum by (le) (rate(agent_upgrade_reconcile_duration_seconds_sum[5m]))')).toBe(1);
      expect(problems('agent_upgrade_rollout_machines{stat="pending"}')).toBe(1);
      expect(problems('agent_upgrade_rollout_phase{phase="halted"}')).toBe(1);
      expect(problems('rates(agent_upgrade_api_requests_total[5m])')).toBe(1);
      expect(problems('{__name__="agent_upgrade_controller_leader"}')).toBe(1);
    });

    it.each(expressions)('%s uses only metrics, labels and values the controller exports', (_where, expr) => {
      expect(promqlProblems(expr, exported)).toEqual([]);
    });

    it('shows every metric family the controller exports', () => {
      const used = expressions.map(([, expr]) => expr).join('\n');
      const missing = [...exported.keys()].filter((name) => !new RegExp(`\\b${name}(_bucket|_count)?\\b`).test(used));
      expect(missing).toEqual([]);
    });
  });

  describe('the Grafana dashboard', () => {
    it('takes its Prometheus from a ${datasource} variable, on every panel and query', () => {
      expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
      const datasource = dashboard.templating.list.find((variable) => variable.name === 'datasource');
      expect(datasource).toMatchObject({ type: 'datasource', query: 'prometheus' });
      expect(queries.length).toBeGreaterThan(0);
      for (const { panel, target } of queries) {
        expect(panel.datasource?.uid, panel.title).toBe('${datasource}');
        expect(target.datasource?.uid, panel.title).toBe('${datasource}');
      }
    });

    it('lists the rollouts by a label the phase metric has', () => {
      const rollout = dashboard.templating.list.find((variable) => variable.name === 'rollout');
      const query = typeof rollout?.query === 'string' ? rollout.query : rollout?.query?.query;
      const match = /^label_values\((\w+),\s*(\w+)\)$/.exec(query ?? '');
      expect(match?.slice(1)).toEqual(['agent_upgrade_rollout_phase', 'rollout']);
      expect(exported.get('agent_upgrade_rollout_phase')?.labels.has('rollout')).toBe(true);
    });
  });

  describe('the PrometheusRule', () => {
    it("is a PrometheusRule in the controller's namespace", () => {
      const manifests = loadAll(readFileSync(join(REPO, 'deploy/agent-upgrade-controller.yaml'), 'utf8'));
      const deployment = manifests.find((doc) => (doc as { kind?: string }).kind === 'Deployment') as
        { metadata: { namespace: string } } | undefined;
      expect(prometheusRule).toMatchObject({
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PrometheusRule',
        metadata: { name: 'agent-upgrade-controller', namespace: deployment?.metadata.namespace },
      });
      expect(prometheusRule.spec.groups.length).toBeGreaterThan(0);
    });

    it('has the five alerts, each with an expression, a duration, a severity and its annotations', () => {
      expect(rules.map((rule) => rule.alert)).toEqual(ALERTS);
      for (const rule of rules) {
        expect(typeof rule.expr, rule.alert).toBe('string');
        expect(String(rule.for), rule.alert).toMatch(/^\d+[smh]$/);
        expect(['warning', 'critical'], rule.alert).toContain(rule.labels?.['severity']);
        for (const annotation of ['summary', 'description', 'runbook_url'])
          expect(rule.annotations?.[annotation], `${rule.alert} ${annotation}`).toMatch(/\S/);
      }
    });

    it('points every runbook_url at a heading of docs/rollouts.md', () => {
      const anchors = headingAnchors(readFileSync(join(REPO, 'docs/rollouts.md'), 'utf8'));
      for (const rule of rules) {
        const url = String(rule.annotations?.['runbook_url']);
        expect(url.startsWith(RUNBOOKS), url).toBe(true);
        expect(anchors.has(url.slice(RUNBOOKS.length)), url).toBe(true);
      }
    });
  });

  describe('promtool', () => {
    let scratch: string;
    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'monitoring-rules-'));
      // promtool reads plain rule groups: the object's spec is one.
      await writeFile(join(scratch, 'rules.yaml'), dump(prometheusRule.spec, { lineWidth: -1 }));
      await copyFile(join(MONITORING, 'prometheus-rules.test.yaml'), join(scratch, 'prometheus-rules.test.yaml'));
      // The dashboard's queries as recording rules, so that promtool parses each of them.
      const recorded = queries.map(({ target }, index) => ({
        record: `dashboard:query_${index}`,
        expr: asRun(target.expr),
      }));
      await writeFile(join(scratch, 'dashboard.yaml'), dump({ groups: [{ name: 'dashboard', rules: recorded }] }));
    });
    afterAll(async () => {
      await rm(scratch, { recursive: true, force: true });
    });

    it('accepts the rules', async () => {
      const run = await promtool(['check', 'rules', 'rules.yaml'], scratch);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    });

    it('passes the unit tests of every alert', async () => {
      const run = await promtool(['test', 'rules', 'prometheus-rules.test.yaml'], scratch);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    });

    it("parses every one of the dashboard's queries", async () => {
      const run = await promtool(['check', 'rules', 'dashboard.yaml'], scratch);
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    });
  });
});
