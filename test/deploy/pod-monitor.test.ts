/**
 * deploy/monitoring/pod-monitor.yaml scrapes what deploy/agent-upgrade-controller.yaml runs: its
 * selector picks the Deployment's pods, in their namespace, on a port the container names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';

const REPO = join(import.meta.dirname, '../..');

interface PodMonitor {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly spec: {
    readonly selector: { readonly matchLabels: Record<string, string> };
    readonly podMetricsEndpoints: readonly { readonly port: string; readonly path: string }[];
  };
}

interface Deployment {
  readonly kind: string;
  readonly metadata: { readonly namespace: string };
  readonly spec: {
    readonly template: {
      readonly metadata: { readonly labels: Record<string, string> };
      readonly spec: { readonly containers: readonly { readonly ports?: readonly { readonly name: string }[] }[] };
    };
  };
}

const monitor = load(readFileSync(join(REPO, 'deploy/monitoring/pod-monitor.yaml'), 'utf8')) as PodMonitor;
const deployment = (
  loadAll(readFileSync(join(REPO, 'deploy/agent-upgrade-controller.yaml'), 'utf8')) as Deployment[]
).find((doc) => doc.kind === 'Deployment');

describe('deploy/monitoring/pod-monitor.yaml', () => {
  it("is a PodMonitor in the controller's namespace", () => {
    expect(monitor).toMatchObject({ apiVersion: 'monitoring.coreos.com/v1', kind: 'PodMonitor' });
    expect(monitor.metadata.namespace).toBe(deployment?.metadata.namespace);
  });

  it("selects the controller's pods and scrapes a port their container names, at /metrics", () => {
    const labels = deployment?.spec.template.metadata.labels ?? {};
    expect(Object.keys(monitor.spec.selector.matchLabels).length).toBeGreaterThan(0);
    for (const [key, value] of Object.entries(monitor.spec.selector.matchLabels)) expect(labels[key], key).toBe(value);
    const ports = (deployment?.spec.template.spec.containers ?? []).flatMap((c) => (c.ports ?? []).map((p) => p.name));
    expect(monitor.spec.podMetricsEndpoints.map((endpoint) => [endpoint.port, endpoint.path])).toEqual([
      ['metrics', '/metrics'],
    ]);
    expect(ports).toContain('metrics');
  });
});
