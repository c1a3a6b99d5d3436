/** controllerSettings: the flags' defaults, what the pod's environment fills in, and each refusal (E_USAGE). */
import { describe, expect, it } from 'vitest';
import {
  controllerSettings,
  DEFAULT_NAMESPACE,
  type ControllerFlags,
} from '../../../src/app/fleet/controller/controller-options.js';

/** The flags as the command's defaults give them. */
const DEFAULTS: ControllerFlags = {
  kubeconfig: undefined,
  kubeContext: undefined,
  namespace: undefined,
  eventsNamespace: 'default',
  identity: undefined,
  leaseName: 'agent-upgrade-controller',
  leaseDuration: '15s',
  renewDeadline: '10s',
  retryPeriod: '2s',
  resync: '5m',
  metricsAddress: ':8080',
  kubeApiQps: '20',
  kubeApiBurst: '30',
};

const settings = (flags: Partial<ControllerFlags> = {}, env: Record<string, string> = {}, hostName = 'host-1') =>
  controllerSettings({ ...DEFAULTS, ...flags }, env, hostName);

const failureCode = (flags: Partial<ControllerFlags>): string | null => {
  const result = settings(flags);
  return result.ok ? null : result.failure.code;
};

describe('controllerSettings', () => {
  it('the defaults: client-go timings, the default namespace, the host name, metrics on every interface', () => {
    expect(settings()).toEqual({
      ok: true,
      value: {
        kubeconfig: null,
        context: null,
        namespace: DEFAULT_NAMESPACE,
        eventsNamespace: 'default',
        leaseName: 'agent-upgrade-controller',
        metrics: { host: '0.0.0.0', port: 8080 },
        writePacing: { qps: 20, burst: 30 },
        leader: { identity: 'host-1', leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 },
        loop: { resyncMs: 300_000, retryDelayMs: 1_000, retryDelayMaxMs: 300_000, settleMs: 250 },
      },
    });
  });

  it('POD_NAME and POD_NAMESPACE fill what the flags leave out', () => {
    const result = settings({}, { POD_NAME: 'controller-7d9f-abc', POD_NAMESPACE: 'fleet-system' });
    expect(result).toMatchObject({
      ok: true,
      value: { namespace: 'fleet-system', leader: { identity: 'controller-7d9f-abc' } },
    });
  });

  it('the flags win over the environment', () => {
    const result = settings(
      { identity: 'replica-a', namespace: 'mine', kubeconfig: '/etc/kubeconfig' },
      { POD_NAME: 'pod', POD_NAMESPACE: 'theirs' },
    );
    expect(result).toMatchObject({
      ok: true,
      value: { namespace: 'mine', kubeconfig: '/etc/kubeconfig', leader: { identity: 'replica-a' } },
    });
  });

  it('no identity at all is E_USAGE', () => {
    expect(settings({}, {}, '')).toMatchObject({ ok: false, failure: { code: 'E_USAGE' } });
  });

  it('durations in Go syntax are read', () => {
    const result = settings({ leaseDuration: '1m30s', renewDeadline: '1m', retryPeriod: '500ms', resync: '1h' });
    expect(result).toMatchObject({
      ok: true,
      value: {
        leader: { leaseDurationMs: 90_000, renewDeadlineMs: 60_000, retryPeriodMs: 500 },
        loop: { resyncMs: 3_600_000 },
      },
    });
  });

  it.each([
    ['leaseDuration', 'nope'],
    ['leaseDuration', '15'],
    ['leaseDuration', '0'],
    ['leaseDuration', '-15s'],
    ['renewDeadline', ''],
    ['retryPeriod', '2 s'],
    ['resync', '0s'],
    ['resync', '5 minutes'],
  ] as const)('--%s %j is E_USAGE', (flag, text) => {
    expect(failureCode({ [flag]: text })).toBe('E_USAGE');
  });

  it.each([
    [{ renewDeadline: '20s' }],
    [{ renewDeadline: '15s' }],
    [{ retryPeriod: '10s' }],
    [{ retryPeriod: '12s' }],
    [{ leaseDuration: '5s', renewDeadline: '10s', retryPeriod: '2s' }],
  ])('timings that do not nest (%o) are E_USAGE', (flags) => {
    expect(failureCode(flags)).toBe('E_USAGE');
  });

  it.each([
    [':8080', { host: '0.0.0.0', port: 8080 }],
    ['127.0.0.1:9090', { host: '127.0.0.1', port: 9090 }],
    ['[::1]:9090', { host: '::1', port: 9090 }],
    ['metrics.local:65535', { host: 'metrics.local', port: 65_535 }],
    ['off', null],
  ])('--metrics-address %s', (metricsAddress, metrics) => {
    expect(settings({ metricsAddress })).toMatchObject({ ok: true, value: { metrics } });
  });

  it.each([['8080'], ['localhost'], [':'], [':99999'], ['::1:9090'], ['[::1]'], ['host:port'], ['a b:80'], ['']])(
    '--metrics-address %j is E_USAGE',
    (metricsAddress) => {
      expect(failureCode({ metricsAddress })).toBe('E_USAGE');
    },
  );

  it.each([
    ['20', '30', { qps: 20, burst: 30 }],
    ['0.5', '1', { qps: 0.5, burst: 1 }],
    ['100000', '100000', { qps: 100_000, burst: 100_000 }],
    ['0', '30', null],
    ['-1', '30', null],
  ] as const)('--kube-api-qps %s --kube-api-burst %s: the write pacing', (kubeApiQps, kubeApiBurst, writePacing) => {
    expect(settings({ kubeApiQps, kubeApiBurst })).toMatchObject({ ok: true, value: { writePacing } });
  });

  it.each([
    [{ kubeApiQps: 'fast' }],
    [{ kubeApiQps: '' }],
    [{ kubeApiQps: '1e3' }],
    [{ kubeApiQps: '20 ' }],
    [{ kubeApiQps: '100001' }],
    [{ kubeApiQps: 'Infinity' }],
    [{ kubeApiBurst: '0' }],
    [{ kubeApiBurst: '-1' }],
    [{ kubeApiBurst: '2.5' }],
    [{ kubeApiBurst: '100001' }],
    // A burst is checked even when the QPS turns the limit off: a typo is a typo.
    [{ kubeApiQps: '0', kubeApiBurst: 'many' }],
  ])('%o is E_USAGE', (flags) => {
    expect(failureCode(flags)).toBe('E_USAGE');
  });
});
