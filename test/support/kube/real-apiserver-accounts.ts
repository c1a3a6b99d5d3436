// Service accounts on the real API server as token identities for the client tests: created and
// bound to the shipped daemon ClusterRole by the admin, tokens issued through the TokenRequest API
// (bound tokens, as a kubelet projects them), and refused once the account is deleted.

import { readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { waitFor } from '../wait-for.js';
import type { RealApiServer } from './real-apiserver.js';

const NAMESPACE = 'default';
const OPS = '/apis/unbounded-cloud.io/v1alpha3/machineoperations';

export interface ServiceAccountIdentity {
  readonly name: string;
  /** `system:serviceaccount:default:<name>`, the user name its tokens authenticate as. */
  readonly user: string;
}

/** Creates the account, binds it to the `agent-upgrade-daemon` ClusterRole, and waits until a token of it may list. */
export async function createServiceAccount(server: RealApiServer, name: string): Promise<ServiceAccountIdentity> {
  const created = await server.request(server.admin, 'POST', `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
    body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } },
  });
  if (created.status !== 201) throw new Error(`service account ${name}: ${created.status} ${created.text}`);
  const bound = await server.request(server.admin, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `agent-upgrade-test-${name}` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'agent-upgrade-daemon' },
      subjects: [{ kind: 'ServiceAccount', name, namespace: NAMESPACE }],
    },
  });
  if (bound.status !== 201) throw new Error(`binding ${name}: ${bound.status} ${bound.text}`);
  const token = await serviceAccountToken(server, name);
  // RBAC reads bindings through an informer: the grant arrives a moment after the create.
  if (!(await waitFor(async () => (await bearerStatus(server, token, OPS)) === 200, 30_000, 200)))
    throw new Error(`service account ${name} was never allowed to list MachineOperations`);
  return { name, user: `system:serviceaccount:${NAMESPACE}:${name}` };
}

/** A new bound token of the account (TokenRequest), valid for an hour. */
export async function serviceAccountToken(server: RealApiServer, name: string, namespace = NAMESPACE): Promise<string> {
  const answer = await server.request(
    server.admin,
    'POST',
    `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
    {
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 3600 },
      },
    },
  );
  const token = (answer.json as { status?: { token?: unknown } } | undefined)?.status?.token;
  if (answer.status !== 201 || typeof token !== 'string') throw new Error(`token of ${name}: ${answer.status}`);
  return token;
}

/**
 * Writes a kubeconfig at `path` that authenticates as the existing account `namespace/name` with
 * a new bound token of it, as a pod's projected token would (e.g. the shipped controller account).
 */
export async function serviceAccountKubeconfig(
  server: RealApiServer,
  namespace: string,
  name: string,
  path: string,
): Promise<string> {
  const token = await serviceAccountToken(server, name, namespace);
  const user = `system:serviceaccount:${namespace}:${name}`;
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'real', cluster: { server: server.origin, 'certificate-authority': server.caPath } }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: 'real', context: { cluster: 'real', user } }],
    'current-context': 'real',
  };
  // JSON is YAML: every kubeconfig reader takes it.
  writeFileSync(path, JSON.stringify(kubeconfig), { mode: 0o600 });
  return path;
}

/**
 * Deletes the account and waits until `token` (one of its tokens) is refused with 401: the API
 * server caches a token it authenticated for about 10 s.
 */
export async function revokeServiceAccount(server: RealApiServer, name: string, token: string): Promise<void> {
  const deleted = await server.request(
    server.admin,
    'DELETE',
    `/api/v1/namespaces/${NAMESPACE}/serviceaccounts/${name}`,
  );
  if (deleted.status !== 200) throw new Error(`deleting ${name}: ${deleted.status}`);
  if (!(await waitFor(async () => (await bearerStatus(server, token, OPS)) === 401, 30_000, 250)))
    throw new Error(`the token of ${name} was still accepted 30 s after the account was deleted`);
}

/** The status of one GET with a bearer token (no client certificate). */
export function bearerStatus(server: RealApiServer, token: string, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server.origin), {
      agent: false,
      ca: readFileSync(server.caPath),
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      timeout: 10_000,
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within 10 s`)));
    req.on('error', reject);
    req.on('response', (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    req.end();
  });
}
