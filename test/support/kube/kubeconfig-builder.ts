// Kubeconfig files for the client tests: one cluster, one user, one context, or any document.

import { writeFileSync } from 'node:fs';
import { dump } from 'js-yaml';

/** A kubeconfig with cluster `c`, user `u` and current context `x` naming both. */
export function kubeconfigDocument(
  cluster: Record<string, unknown>,
  user: Record<string, unknown>,
): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  };
}

/** Writes `document` (YAML) to `path`, owner-only like a kubeconfig holding credentials, and returns the path. */
export function writeKubeconfigFile(path: string, document: Record<string, unknown>): string {
  writeFileSync(path, dump(document), { mode: 0o600 });
  return path;
}
