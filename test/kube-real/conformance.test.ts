/**
 * The kube-apiserver conformance suite (test/contracts/kube-apiserver.contract.ts) against a real
 * kube-apiserver with the shipped CRD applied, as the cluster admin: what the fake must match.
 */
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import { kubeApiServerContract } from '../contracts/kube-apiserver.contract.js';
import { OPS } from '../contracts/kube-apiserver.support.js';
import { RealApiServer } from '../support/kube/real-apiserver.js';
import { waitFor } from '../support/wait-for.js';

const CRD = join(resolve(import.meta.dirname, '../..'), 'deploy/machineoperation-crd.yaml');

kubeApiServerContract('a real kube-apiserver', async () => {
  const server = await RealApiServer.start();
  try {
    const applied = await server.kubectl(server.admin, ['apply', '-f', CRD]);
    expect(applied.status, applied.stderr).toBe(0);
    const established = await server.kubectl(server.admin, [
      'wait',
      '--for=condition=Established',
      'crd/machineoperations.unbounded-cloud.io',
      '--timeout=60s',
    ]);
    expect(established.status, established.stderr).toBe(0);
    expect(
      await waitFor(async () => (await server.request(server.admin, 'GET', OPS)).status === 200, 30_000, 200),
    ).toBe(true);
  } catch (error) {
    await server.stop();
    throw error;
  }
  return {
    target: {
      kind: 'real',
      admin: (method, path, options) => server.request(server.admin, method, path, options),
      anonymous: (method, path) => server.request('anonymous', method, path),
    },
    stop: () => server.stop(),
  };
});
