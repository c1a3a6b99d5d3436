// The API server's JSON read into the planner's shapes: what a Node keeps, which operations count,
// and how an informer passes on an object that stops being one it keeps.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CollectionEvent } from '../../../../src/adapters/fleet/kubernetes/informer.js';
import { runInformer } from '../../../../src/adapters/fleet/kubernetes/informer.js';
import {
  readNode,
  readOperation,
  readRelease,
  readRollout,
} from '../../../../src/adapters/fleet/kubernetes/read-objects.js';
import { OPERATIONS_PATH, objectPath } from '../../../../src/adapters/fleet/kubernetes/resource-paths.js';
import type { InformerEvent, OperationFacts } from '../../../../src/ports/fleet/controller-cluster.js';
import { machineOperation } from '../../../support/kube/machine-operations.js';
import { EventLog, settled, startHarness, type Harness } from './controller-harness.js';

const VERSION_ANNOTATION = 'agent-upgrade.dev/agent-version';

describe('the Node reader', () => {
  it('keeps a Node with its labels and only the agent-version annotation', () => {
    const raw = {
      metadata: {
        name: 'n-1',
        uid: 'u-1',
        resourceVersion: '7',
        labels: { 'kubernetes.io/arch': 'arm64', bogus: 3 },
        annotations: { [VERSION_ANNOTATION]: '1.4.1', 'node.alpha.kubernetes.io/ttl': '0', other: 'x' },
      },
      status: { capacity: { cpu: '4' }, images: [{ names: ['big'] }] },
    };
    expect(readNode(raw)).toEqual({
      name: 'n-1',
      uid: 'u-1',
      labels: { 'kubernetes.io/arch': 'arm64' },
      annotations: { [VERSION_ANNOTATION]: '1.4.1' },
    });
    expect(readNode({ ...raw, metadata: { ...raw.metadata, annotations: { other: 'x' } } })?.annotations).toEqual({});
    expect(readNode({ metadata: { name: 'n-1', resourceVersion: '7' } })).toBeNull();
  });
});

describe('the operation reader', () => {
  it('reads an AgentUpgrade operation with a machineRef, and nothing else, as OperationFacts', () => {
    const metadata = {
      name: 'op-1',
      uid: 'u-op',
      resourceVersion: '9',
      creationTimestamp: '2025-01-01T00:00:10Z',
      labels: { 'agent-upgrade.dev/rollout': 'fleet' },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Other', name: 'x', uid: 'not-controller' },
        {
          apiVersion: 'agent-upgrade.dev/v1alpha1',
          kind: 'AgentRollout',
          name: 'fleet',
          uid: 'u-fleet',
          controller: true,
        },
      ],
    };
    const status = {
      phase: 'Failed',
      message: 'the health gate failed',
      startedAt: '2025-01-01T00:00:20Z',
      conditions: [
        { type: 'Completed', status: 'True', reason: 'HealthGateFailed', lastTransitionTime: '2025-01-01T00:01:00Z' },
      ],
    };
    const spec = { operationKind: 'AgentUpgrade', machineRef: 'n-1' };
    expect(readOperation({ metadata, spec, status })).toEqual({
      name: 'op-1',
      uid: 'u-op',
      machineRef: 'n-1',
      labels: { 'agent-upgrade.dev/rollout': 'fleet' },
      ownerUid: 'u-fleet',
      phase: 'Failed',
      reason: 'HealthGateFailed',
      message: 'the health gate failed',
      createdMs: Date.UTC(2025, 0, 1, 0, 0, 10),
      startedMs: Date.UTC(2025, 0, 1, 0, 0, 20),
      completedMs: Date.UTC(2025, 0, 1, 0, 1, 0),
    });
    expect(readOperation({ metadata, spec: { ...spec, operationKind: 'NodeReboot' } })).toBeNull();
    expect(readOperation({ metadata, spec: { operationKind: 'AgentUpgrade', machineSelector: {} } })).toBeNull();
    expect(readOperation({ metadata, spec: { ...spec, machineRef: 7 } })).toBeNull();
  });
});

describe('the rollout and release readers', () => {
  it('keeps a rollout’s and a release’s spec and status as they are, and refuses an object without a uid', () => {
    const metadata = { name: 'fleet', uid: 'u', resourceVersion: '3', generation: 2, annotations: { a: 'b' } };
    expect(readRollout({ metadata, spec: { state: 'Run' } })).toEqual({
      name: 'fleet',
      uid: 'u',
      generation: 2,
      resourceVersion: '3',
      annotations: { a: 'b' },
      spec: { state: 'Run' },
      status: null,
    });
    expect(readRelease({ metadata, spec: { version: '1.0.0' }, status: { observedGeneration: 2 } })).toEqual({
      name: 'fleet',
      uid: 'u',
      generation: 2,
      resourceVersion: '3',
      spec: { version: '1.0.0' },
      status: { observedGeneration: 2 },
    });
    expect(readRelease({ metadata: { name: 'x', resourceVersion: '3' } })).toBeNull();
    expect(readRollout('not an object')).toBeNull();
  });
});

describe('an informer of objects a reader refuses', () => {
  let harness: Harness | undefined;
  let stop: AbortController;
  let running: Promise<void> | undefined;
  beforeEach(() => (stop = new AbortController()));
  afterEach(async () => {
    stop.abort();
    await settled(running);
    await harness?.close();
    harness = undefined;
  });

  it('leaves them out of the replace and delivers a change to one as a delete', async () => {
    const { fake, cluster, http } = (harness = await startHarness());
    fake.create(machineOperation('upgrade-1', 'n-1'));
    fake.create(machineOperation('reboot-1', 'n-1', { operationKind: 'NodeReboot' }));
    fake.create(machineOperation('selected-1', null, { machineSelector: { matchLabels: { pool: 'a' } } }));
    const log = new EventLog<CollectionEvent<OperationFacts>>();
    const resource = { resource: 'machineoperations', path: OPERATIONS_PATH, read: readOperation };
    running = runInformer(cluster.informerParts('machineoperations'), resource, log.push, stop.signal);
    const replaced = await log.next((event) => event.type === 'replace');
    expect(replaced.type === 'replace' && replaced.objects.map((operation) => operation.name)).toEqual(['upgrade-1']);

    fake.create(machineOperation('reboot-2', 'n-2', { operationKind: 'NodeReboot' }));
    const current = fake.get('upgrade-1');
    const spec = { ...current?.spec, operationKind: 'NodeReboot' };
    await http.call('PUT', objectPath(OPERATIONS_PATH, 'upgrade-1'), { body: { ...current, spec } });
    await log.next((event) => event.type === 'delete' && event.name === 'upgrade-1');
    expect(log.events.slice(1)).toEqual([
      { type: 'delete', name: 'reboot-2' },
      { type: 'delete', name: 'upgrade-1' },
    ]);
    expect(fake.get('upgrade-1')?.spec?.['operationKind']).toBe('NodeReboot');
  });

  it('passes on only the agent-version annotation of a watched Node', async () => {
    const { fake, cluster } = (harness = await startHarness());
    const log = new EventLog<InformerEvent>();
    running = cluster.inform(log.push, stop.signal);
    await log.next((event) => event.type === 'replace' && event.kind === 'nodes');
    const annotations = {
      [VERSION_ANNOTATION]: '1.4.2',
      'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
    };
    fake.setNode('n-1', { zone: 'a' }, annotations);
    const upserted = await log.next((event) => event.type === 'upsert');
    expect(upserted).toEqual({
      type: 'upsert',
      kind: 'nodes',
      object: {
        name: 'n-1',
        uid: fake.getNode('n-1')?.metadata.uid,
        labels: { zone: 'a' },
        annotations: { [VERSION_ANNOTATION]: '1.4.2' },
      },
    });
  });
});
