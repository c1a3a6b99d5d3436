// Starts the tests' real API server for a person at a terminal (test/kube-apiserver/serve.sh
// bundles and runs this file): the same harness, flags and PKI as test/kube-real, with the
// shipped CRDs (MachineOperation, AgentRelease, AgentRollout) and the daemon's RBAC applied,
// until Ctrl-C. Prints the kubeconfigs to use.

import { resolve } from 'node:path';
import { RealApiServer } from './real-apiserver.js';

const REPO = resolve(import.meta.dirname, '../../..');
const MANIFESTS = [
  'deploy/machineoperation-crd.yaml',
  'deploy/agentrelease-crd.yaml',
  'deploy/agentrollout-crd.yaml',
  'deploy/agent-upgrade-rbac.yaml',
];

async function main(nodeNames: readonly string[]): Promise<void> {
  const server = await RealApiServer.start();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= server.stop());
  process.once('SIGINT', () => void stop().then(() => process.exit(0)));
  process.once('SIGTERM', () => void stop().then(() => process.exit(0)));
  try {
    const applied = await server.kubectl(server.admin, [
      'apply',
      ...MANIFESTS.flatMap((file) => ['-f', resolve(REPO, file)]),
    ]);
    process.stdout.write(applied.stdout + applied.stderr);
    const nodes = await Promise.all(nodeNames.map((name) => server.node(name)));
    const lines = [
      `kube-apiserver ${server.origin} ready in ${server.startupMs} ms; logs and keys in ${server.dir}`,
      `kubectl:  ${server.binaries.kubectl}`,
      `admin:    export KUBECONFIG=${server.admin.kubeconfigPath}`,
      ...nodes.map((node) => `${node.user}: export KUBECONFIG=${node.kubeconfigPath}`),
      'Ctrl-C stops etcd and the API server and removes the temp dir.',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } catch (error) {
    await stop();
    throw error;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
