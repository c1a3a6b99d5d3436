import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonObject, MachineOperationInput } from './fake-apiserver.js';

/** A MachineOperation manifest as a test creates it (spec, optional status). */
export function machineOperation(
  name: string,
  machineRef: string | null,
  extra: {
    readonly operationKind?: string;
    readonly parameters?: Record<string, string>;
    readonly machineSelector?: JsonObject;
    readonly status?: JsonObject;
  } = {},
): MachineOperationInput {
  return {
    apiVersion: 'unbounded-cloud.io/v1alpha3',
    kind: 'MachineOperation',
    metadata: { name },
    spec: {
      operationKind: extra.operationKind ?? 'AgentUpgrade',
      ...(machineRef === null ? {} : { machineRef }),
      ...(extra.machineSelector === undefined ? {} : { machineSelector: extra.machineSelector }),
      parameters: extra.parameters ?? { downloadURL: 'http://127.0.0.1:9/agent.tar.gz' },
    },
    ...(extra.status === undefined ? {} : { status: extra.status }),
  };
}

/** A kubeconfig for the fake API server (plain http on loopback), written under `directory`. */
export function writeKubeconfig(directory: string, origin: string): string {
  const path = join(directory, 'kubeconfig.yaml');
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: fake',
      '  cluster:',
      `    server: ${origin}`,
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: daemon',
      '  user:',
      '    token: test-token',
      'contexts:',
      '- name: fake',
      '  context:',
      '    cluster: fake',
      '    user: daemon',
      'current-context: fake',
      '',
    ].join('\n'),
  );
  return path;
}
