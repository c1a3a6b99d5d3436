// The rollout controller's resources as the conformance suite writes them: paths, valid bodies to
// vary, and the one setup step a bare server needs (installing the AgentRelease and AgentRollout
// CRDs, which the fake serves from the start), so every case runs unchanged against both.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { load } from 'js-yaml';
import type { KubeResponse, KubeTarget } from './kube-apiserver.support.js';

const DEPLOY = join(resolve(import.meta.dirname, '../..'), 'deploy');

export const NODES = '/api/v1/nodes';
export const NAMESPACES = '/api/v1/namespaces';
export const RELEASES = '/apis/agent-upgrade.dev/v1alpha1/agentreleases';
export const ROLLOUTS = '/apis/agent-upgrade.dev/v1alpha1/agentrollouts';
export const leases = (namespace: string): string => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
export const events = (namespace: string): string => `/apis/events.k8s.io/v1/namespaces/${namespace}/events`;

export const SHA256 = '5f70bf18a086007016e948b04aed3b82103a36bea41755b6cddfaf10ace3c6ef';

/** A stored object as the cases read it. */
export interface Stored {
  readonly metadata: {
    readonly name: string;
    readonly resourceVersion: string;
    readonly generation?: number;
    readonly uid: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly spec?: Record<string, unknown>;
  readonly status?: Record<string, unknown>;
  readonly [field: string]: unknown;
}

export const artifact = (arch = 'amd64', extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  arch,
  downloadURL: `https://releases.example.com/agent-${arch}.tar.gz`,
  sha256: SHA256,
  ...extra,
});

export const releaseSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  version: '1.4.2',
  artifacts: [artifact('amd64'), artifact('arm64')],
  ...extra,
});

export const release = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): object => ({
  apiVersion: 'agent-upgrade.dev/v1alpha1',
  kind: 'AgentRelease',
  metadata: { name },
  spec,
  ...extra,
});

export const rolloutSpec = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  releaseRef: { name: 'release-b' },
  targets: { selector: { matchLabels: { pool: 'contract' } } },
  strategy: { waves: [{ name: 'all', percent: 100 }] },
  rollback: { releaseRef: { name: 'release-a' } },
  ...extra,
});

export const rollout = (name: string, spec: Record<string, unknown>, extra: Record<string, unknown> = {}): object => ({
  apiVersion: 'agent-upgrade.dev/v1alpha1',
  kind: 'AgentRollout',
  metadata: { name },
  spec,
  ...extra,
});

export const node = (name: string, labels: Record<string, string> = {}): object => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
});

export const lease = (name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): object => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, ...metadata },
  spec,
});

/** An Event about a cluster-scoped rollout, as the controller records one; `fields` replace or (undefined) remove. */
export function event(name: string, fields: Record<string, unknown> = {}): object {
  const body: Record<string, unknown> = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2024-01-01T00:00:00.123000Z',
    reportingController: 'agent-upgrade.dev/controller',
    reportingInstance: 'controller-0',
    action: 'Halted',
    reason: 'Halted',
    type: 'Warning',
    note: 'the failure budget of wave canary is used up',
    regarding: { apiVersion: 'agent-upgrade.dev/v1alpha1', kind: 'AgentRollout', name: 'fleet', uid: 'u-1' },
  };
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) delete body[key];
    else body[key] = value;
  }
  return body;
}

export const stored = (answer: KubeResponse): Stored => answer.json as Stored;

const settle = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/**
 * Makes `target` serve AgentReleases and AgentRollouts: a server that does not yet (a bare real
 * one) gets the shipped CRDs; then waits, bounded, until both lists answer 200 (a new CRD is
 * answered 404 or 429 for a moment while its storage starts).
 */
export async function ensureRolloutResources(target: KubeTarget, timeoutMs = 60_000): Promise<void> {
  const wanted: [string, string][] = [
    [RELEASES, 'agentrelease-crd.yaml'],
    [ROLLOUTS, 'agentrollout-crd.yaml'],
  ];
  for (const [path, file] of wanted) {
    if ((await target.admin('GET', path)).status === 200) continue;
    const crd = load(readFileSync(join(DEPLOY, file), 'utf8')) as object;
    const created = await target.admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: crd,
    });
    if (created.status !== 201 && created.status !== 409)
      throw new Error(`installing ${file} answered ${created.status}: ${created.text}`);
  }
  const deadline = Date.now() + timeoutMs;
  for (const [path] of wanted) {
    while ((await target.admin('GET', path)).status !== 200) {
      if (Date.now() > deadline) throw new Error(`${path} is not served within ${timeoutMs} ms`);
      await settle(200);
    }
  }
}
