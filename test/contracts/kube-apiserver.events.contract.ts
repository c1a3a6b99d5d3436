/**
 * The Events of the conformance suite's built-in resources (kube-apiserver.builtin.contract.ts
 * registers them): create with the validation events.k8s.io/v1 applies, as the rollout controller
 * records them.
 */
import { expect, it } from 'vitest';
import type { Suite } from './kube-apiserver.contract.js';
import { event, events, NAMESPACES, type Stored, stored } from './kube-apiserver.objects.js';
import { causesOf, statusShape } from './kube-apiserver.support.js';

const EVENTS = events('default');

/** Events the API refuses, with the causes a client gets (sorted). */
const REFUSED_EVENTS: readonly [string, Record<string, unknown>, readonly string[]][] = [
  ['no eventTime', { eventTime: undefined }, ['FieldValueRequired eventTime']],
  [
    'no reportingController',
    { reportingController: undefined },
    [
      'FieldValueInvalid reportingController',
      'FieldValueInvalid reportingController',
      'FieldValueRequired reportingController',
    ],
  ],
  [
    'a reportingController that is no qualified name',
    { reportingController: 'not a name' },
    ['FieldValueInvalid reportingController'],
  ],
  ['no reportingInstance', { reportingInstance: undefined }, ['FieldValueRequired reportingInstance']],
  ['no action', { action: undefined }, ['FieldValueRequired action']],
  ['no reason', { reason: undefined }, ['FieldValueRequired reason']],
  ['a reason over 128 bytes', { reason: 'r'.repeat(129) }, ['FieldValueInvalid reason']],
  ['a type other than Normal and Warning', { type: 'Info' }, ['FieldValueInvalid type']],
  ['no type', { type: undefined }, ['FieldValueInvalid type']],
  ['a note over 1024 bytes', { note: 'n'.repeat(1025) }, ['FieldValueInvalid message']],
  [
    'a series of one',
    { series: { count: 1 } },
    ['FieldValueInvalid series.count', 'FieldValueRequired series.lastObservedTime'],
  ],
  ['a deprecated count', { deprecatedCount: 2 }, ['FieldValueInvalid count']],
];

export function eventCases(suite: Suite): void {
  it('records an Event (201), reads it back and lists it; the name again is 409 AlreadyExists', async () => {
    const created = await suite.api.admin('POST', EVENTS, { body: event('fleet.halted-1') });
    expect(created.status, created.text).toBe(201);
    expect(stored(created)).toMatchObject({
      reason: 'Halted',
      type: 'Warning',
      eventTime: '2024-01-01T00:00:00.123000Z',
    });
    expect((await suite.api.admin('GET', `${EVENTS}/fleet.halted-1`)).status).toBe(200);
    const listed = (await suite.api.admin('GET', `${EVENTS}?fieldSelector=metadata.name%3Dfleet.halted-1`)).json as {
      items: Stored[];
    };
    expect(listed.items.map((item) => item.metadata.name)).toEqual(['fleet.halted-1']);
    const again = await suite.api.admin('POST', EVENTS, { body: event('fleet.halted-1') });
    expect(statusShape(again)).toMatchObject({
      reason: 'AlreadyExists',
      code: 409,
      details: { name: 'fleet.halted-1', group: 'events.k8s.io', kind: 'events' },
    });
    // The API does not require `regarding`.
    expect(
      (await suite.api.admin('POST', EVENTS, { body: event('fleet.unregarded', { regarding: undefined }) })).status,
    ).toBe(201);
  });
}

export function refusedEventCases(suite: Suite): void {
  it.each(REFUSED_EVENTS)('refuses an Event with %s (422 naming each cause)', async (what, fields, causes) => {
    const name = `refused.${what.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`.replace(/-$/, '');
    const answer = await suite.api.admin('POST', EVENTS, { body: event(name, fields) });
    expect(answer.status, answer.text).toBe(422);
    expect(statusShape(answer)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Invalid',
      code: 422,
      details: { name, kind: 'Event' },
    });
    expect(causesOf(answer)).toEqual(causes);
  });

  it('answers an eventTime that is no MicroTime with 400, and records an Event about a cluster-scoped object only in default or kube-system', async () => {
    const seconds = await suite.api.admin('POST', EVENTS, {
      body: event('refused.seconds', { eventTime: '2024-01-01T00:00:00Z' }),
    });
    expect(statusShape(seconds)).toMatchObject({ reason: 'BadRequest', code: 400 });
    const made = await suite.api.admin('POST', NAMESPACES, {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'contract-events' } },
    });
    expect([201, 409]).toContain(made.status);
    const elsewhere = await suite.api.admin('POST', events('contract-events'), { body: event('fleet.elsewhere') });
    expect(causesOf(elsewhere)).toEqual(['FieldValueInvalid involvedObject.namespace']);
    expect((await suite.api.admin('POST', events('kube-system'), { body: event('fleet.system') })).status).toBe(201);
  });
}
