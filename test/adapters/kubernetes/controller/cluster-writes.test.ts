// The controller's writes against the fake API server: status PUTs guarded by the
// resourceVersion, the release quarantine patch, idempotent creates, Events, and the request
// samples every one of them leaves in the metrics.

import { afterEach, describe, expect, it } from 'vitest';
import { ClusterError } from '../../../../src/domain/common/port-errors.js';
import type { ApiRequestSample } from '../../../../src/ports/fleet/controller-metrics.js';
import {
  IDENTITY,
  operationManifest,
  releaseInput,
  releaseStatus,
  rolloutEvent,
  rolloutInput,
  rolloutStatus,
  startHarness,
  type Harness,
} from './controller-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** A harness holding the release `rel` and the rollout `fleet` of it. */
async function seeded(): Promise<Harness> {
  const started = (harness = await startHarness());
  started.fake.releases.create(releaseInput('rel'));
  started.fake.rollouts.create(rolloutInput('fleet', 'rel'));
  return started;
}

const sample = (verb: ApiRequestSample['verb'], resource: string, code: number | null): ApiRequestSample => ({
  verb,
  resource,
  code,
});

describe('status updates', () => {
  it('writes a rollout status at the current resourceVersion, refuses a stale one, and tells a missing rollout', async () => {
    const { fake, cluster, metrics } = await seeded();
    const created = fake.rollouts.get('fleet');
    const first = rolloutStatus('Progressing', 1);
    expect(await cluster.updateRolloutStatus('fleet', created?.metadata.resourceVersion ?? '', first)).toBe('updated');
    const written = fake.rollouts.get('fleet');
    expect(written?.status).toEqual(first);
    expect(written?.spec).toEqual(created?.spec);

    const stale = rolloutStatus('Succeeded', 3);
    expect(await cluster.updateRolloutStatus('fleet', created?.metadata.resourceVersion ?? '', stale)).toBe('conflict');
    expect(fake.rollouts.get('fleet')).toEqual(written);
    expect(await cluster.updateRolloutStatus('gone', '5', stale)).toBe('not-found');
    expect(metrics.requests).toEqual([
      sample('update', 'agentrollouts', 200),
      sample('update', 'agentrollouts', 409),
      sample('update', 'agentrollouts', 404),
    ]);
  });

  it('writes a release status the same way', async () => {
    const { fake, cluster, metrics } = await seeded();
    const version = fake.releases.get('rel')?.metadata.resourceVersion ?? '';
    expect(await cluster.updateReleaseStatus('rel', version, releaseStatus('True'))).toBe('updated');
    const written = fake.releases.get('rel');
    expect(written?.status).toEqual(releaseStatus('True'));
    expect(await cluster.updateReleaseStatus('rel', version, releaseStatus('False'))).toBe('conflict');
    expect(fake.releases.get('rel')).toEqual(written);
    expect(await cluster.updateReleaseStatus('other', version, releaseStatus('True'))).toBe('not-found');
    expect(metrics.requests.map((entry) => entry.code)).toEqual([200, 409, 404]);
    expect(new Set(metrics.requests.map((entry) => `${entry.verb} ${entry.resource}`))).toEqual(
      new Set(['update agentreleases']),
    );
  });

  it("keeps a signed release's record: the CRD's schema holds status.signed, so it is not pruned", async () => {
    const { fake, cluster } = await seeded();
    const version = fake.releases.get('rel')?.metadata.resourceVersion ?? '';
    const artifact = { arch: 'amd64' as const, targetPath: 'agent/1.4.2/agent-amd64.tar.gz', sha256: 'a'.repeat(64) };
    const status = { ...releaseStatus('True'), signed: { version: '1.4.2', artifacts: [artifact] } };
    expect(await cluster.updateReleaseStatus('rel', version, status as never)).toBe('updated');
    expect(fake.releases.get('rel')?.status).toEqual(status);
  });

  it('answers a status the CRD refuses with the ClusterError 422', async () => {
    const { fake, cluster } = await seeded();
    const version = fake.rollouts.get('fleet')?.metadata.resourceVersion ?? '';
    const invalid = { ...rolloutStatus('Progressing', 1), progress: 'x'.repeat(40) };
    const outcome = await cluster.updateRolloutStatus('fleet', version, invalid).catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ClusterError);
    expect(outcome).toMatchObject({ status: 422, code: 'refused' });
    expect(fake.rollouts.get('fleet')?.status).toBeUndefined();
  });
});

describe('the release quarantine', () => {
  it('sets spec.quarantine by merge patch and leaves the rest of the release as it was', async () => {
    const { fake, cluster, metrics } = await seeded();
    const version = fake.releases.get('rel')?.metadata.resourceVersion ?? '';
    await cluster.updateReleaseStatus('rel', version, releaseStatus('True'));
    const before = fake.releases.get('rel');
    const quarantine = { quarantined: true, reason: 'rollout fleet halted: FailureBudgetExceeded' } as const;
    expect(await cluster.quarantineRelease('rel', quarantine)).toBe(true);
    const after = fake.releases.get('rel');
    expect(after?.spec).toEqual({ ...before?.spec, quarantine });
    expect(after?.status).toEqual(before?.status);
    expect(after?.metadata.uid).toBe(before?.metadata.uid);
    expect(await cluster.quarantineRelease('missing', quarantine)).toBe(false);
    expect(metrics.requests.slice(1)).toEqual([
      sample('patch', 'agentreleases', 200),
      sample('patch', 'agentreleases', 404),
    ]);
  });
});

describe('creates and Events', () => {
  it('creates an operation, answers exists the second time, and refuses an invalid one with 422', async () => {
    const { fake, cluster, metrics } = await seeded();
    expect(await cluster.createOperation(operationManifest('fleet-n-1', 'n-1'))).toBe('created');
    expect(fake.get('fleet-n-1')).toMatchObject({
      metadata: { labels: { 'agent-upgrade.dev/rollout': 'fleet' }, ownerReferences: [{ uid: 'uid-fleet' }] },
      spec: { machineRef: 'n-1', operationKind: 'AgentUpgrade' },
    });
    expect(await cluster.createOperation(operationManifest('fleet-n-1', 'n-2'))).toBe('exists');
    expect(fake.get('fleet-n-1')?.spec?.['machineRef']).toBe('n-1');

    const refused = await cluster.createOperation(operationManifest('fleet-bad', '')).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ClusterError);
    expect(refused).toMatchObject({ status: 422, code: 'refused' });
    expect(fake.get('fleet-bad')).toBeUndefined();
    expect(metrics.requests).toEqual([
      sample('create', 'machineoperations', 201),
      sample('create', 'machineoperations', 409),
      sample('create', 'machineoperations', 422),
    ]);
  });

  it('records an Event in the given namespace with its time, reporter and subject', async () => {
    const { fake, cluster, metrics } = await seeded();
    const uid = fake.rollouts.get('fleet')?.metadata.uid ?? '';
    const atMs = Date.UTC(2025, 2, 1, 12, 0, 5, 250);
    await cluster.recordEvent(rolloutEvent('fleet', uid), atMs);
    await cluster.recordEvent(rolloutEvent('fleet', uid), atMs);
    const events = fake.events();
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({
      metadata: { namespace: 'default' },
      eventTime: '2025-03-01T12:00:05.250000Z',
      reportingController: 'agent-upgrade.dev/controller',
      reportingInstance: IDENTITY,
      action: 'WaveStarted',
      reason: 'WaveStarted',
      type: 'Normal',
      note: 'wave all started: 3 machines',
      regarding: { apiVersion: 'agent-upgrade.dev/v1alpha1', kind: 'AgentRollout', name: 'fleet', uid },
    });
    expect(new Set(events.map((event) => (event['metadata'] as { name: string }).name)).size).toBe(2);
    expect(metrics.requests).toEqual([sample('create', 'events', 201), sample('create', 'events', 201)]);
  });

  it('cuts a long message to the 1024 bytes a note may hold, on a character boundary', async () => {
    const { fake, cluster } = await seeded();
    const message = `halted: ${'é'.repeat(600)}${'😀'.repeat(100)}`;
    await cluster.recordEvent({ ...rolloutEvent('fleet', 'uid-fleet'), message }, Date.UTC(2025, 2, 1));
    const note = String(fake.events()[0]?.['note']);
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(1024);
    expect(message.startsWith(note)).toBe(true);
    expect(note.length).toBeGreaterThan(500);
  });

  it('names an Event about an object named near the 253-character limit validly', async () => {
    const { fake, cluster } = await seeded();
    const long = `${'a'.repeat(240)}-${'b'.repeat(12)}`;
    await cluster.recordEvent(rolloutEvent(long, 'uid-long'), Date.UTC(2025, 2, 1));
    const name = String((fake.events()[0]?.['metadata'] as { name?: unknown } | undefined)?.name);
    expect(name.length).toBeLessThanOrEqual(253);
    expect(name.startsWith('a'.repeat(200))).toBe(true);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/);
  });

  it('counts a request the server does not answer with a null code', async () => {
    const { fake, cluster, metrics } = await seeded();
    await fake.close();
    const outcome = await cluster
      .createOperation(operationManifest('fleet-n-1', 'n-1'))
      .catch((error: unknown) => error);
    expect(outcome).toBeInstanceOf(ClusterError);
    expect(outcome).toMatchObject({ status: null, code: 'unavailable' });
    expect(metrics.requests).toEqual([sample('create', 'machineoperations', null)]);
  });
});
