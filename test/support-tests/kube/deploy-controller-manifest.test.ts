// The controller's Deployment in deploy/: it runs `agent-upgrade controller` as the account the
// controller RBAC grants, in that namespace, with two replicas, the pod's name and namespace for
// leader election, and probes on the endpoints the controller serves. (The real API server
// accepting it is a dry run in test/kube-real/rollout-cli.test.ts.)

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { controllerSettings, DEFAULT_NAMESPACE } from '../../../src/app/fleet/controller/controller-options.js';
import { ControllerCommand } from '../../../src/app/fleet/cli/controller-command.js';
import type { ProgramContext } from '../../../src/app/main/program-context.js';
import { createCli } from '../../../src/app/main/create-cli.js';

const DEPLOY = join(import.meta.dirname, '../../../deploy');
/** A YAML document, untyped on purpose (`any`): each test reads the fields it checks. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = { [key: string]: any };
const load = (name: string): Doc[] => loadAll(readFileSync(join(DEPLOY, name), 'utf8')) as Doc[];
const [deployment] = load('agent-upgrade-controller.yaml') as [Doc];
const account = load('agent-upgrade-controller-rbac.yaml').find((doc) => doc['kind'] === 'ServiceAccount') as Doc;
const pod = deployment['spec'].template.spec;
const [container] = pod.containers as [Doc];

describe('the controller Deployment', () => {
  it('runs as the account the controller RBAC grants, in its namespace, two replicas', () => {
    expect(deployment['kind']).toBe('Deployment');
    expect(deployment['metadata'].namespace).toBe(account['metadata'].namespace);
    expect(deployment['metadata'].namespace).toBe(DEFAULT_NAMESPACE);
    expect(pod.serviceAccountName).toBe(account['metadata'].name);
    expect(deployment['spec'].replicas).toBe(2);
    expect(deployment['spec'].selector.matchLabels).toEqual(deployment['spec'].template.metadata.labels);
  });

  it('gives each replica its pod name and namespace, which name it in the Lease', () => {
    const env = Object.fromEntries(
      (container['env'] as Doc[]).map((entry) => [entry['name'], entry['valueFrom']?.fieldRef?.fieldPath]),
    );
    expect(env).toEqual({ POD_NAME: 'metadata.name', POD_NAMESPACE: 'metadata.namespace' });
  });

  it('runs the controller command with flags the CLI accepts, and probes what it serves on the metrics port', () => {
    const [binary, command, ...flags] = container['args'] as string[];
    expect([binary, command]).toEqual(['agent-upgrade', 'controller']);
    // The command line as the CLI parses it, read as the controller reads its flags.
    // Parsing reads no context: an empty one stands in.
    const parsed = createCli().process(
      [command as string, ...flags],
      {} as ProgramContext,
    ) as unknown as ControllerCommand;
    expect(parsed).toBeInstanceOf(ControllerCommand);
    expect(parsed.logLevel).toBe('info');
    const settings = controllerSettings(parsed, { POD_NAME: 'replica-0', POD_NAMESPACE: DEFAULT_NAMESPACE }, 'host');
    expect(settings.ok && settings.value.metrics).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(settings.ok && settings.value.leader.identity).toBe('replica-0');
    const port = (container['ports'] as Doc[]).find((entry) => entry['name'] === 'metrics');
    expect(port?.['containerPort']).toBe(8080);
    expect(container['livenessProbe'].httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(container['readinessProbe'].httpGet).toEqual({ path: '/readyz', port: 'metrics' });
  });
});
