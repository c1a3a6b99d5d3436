import type { MemoryContainerRootfs } from '../../src/adapters/node/memory/memory-container-rootfs.js';
import type { MemoryServiceManager } from '../../src/adapters/node/memory/memory-service-manager.js';
import type { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import type { Trace } from './harness/trace.js';

// Port faults of the managed simulation: which calls can fail and how, and the injector that asks
// a chooser at every call of a faultable port method. FS crash points and errnos are armed on the
// world's file system directly.

export type PortMethod =
  | 'markInProgress'
  | 'publish'
  | 'scheduleRestart'
  | 'restart'
  | 'waitHealthy'
  | 'convergeAssets'
  | 'install'
  | 'digest';

export type PortFault =
  /** A refused cluster write (HTTP status, or a network error), or one applied whose response was lost. */
  | { readonly kind: 'cluster'; readonly status: number | null; readonly afterWrite: boolean; readonly times: number }
  /** The service manager or the container copy fails this call. */
  | { readonly kind: 'fail' };

export interface PortCall {
  readonly method: PortMethod;
  /** 1 for the first call of `method` in this upgrade, 2 for the second, … */
  readonly ordinal: number;
}

export type FaultChooser = (call: PortCall) => PortFault | null;

const cluster = (status: number | null, afterWrite = false, times = 1): PortFault => ({
  kind: 'cluster',
  status,
  afterWrite,
  times,
});

/** Every way each faultable port call can fail. */
export const FAULT_OPTIONS: Readonly<Record<PortMethod, readonly PortFault[]>> = {
  markInProgress: [cluster(409), cluster(500), cluster(null), cluster(500, true)],
  publish: [cluster(409), cluster(500), cluster(null), cluster(500, true), cluster(500, false, 5)],
  scheduleRestart: [{ kind: 'fail' }],
  restart: [{ kind: 'fail' }],
  waitHealthy: [{ kind: 'fail' }],
  convergeAssets: [{ kind: 'fail' }],
  install: [{ kind: 'fail' }],
  digest: [{ kind: 'fail' }],
};

export function describeFault(call: PortCall, fault: PortFault): string {
  if (fault.kind === 'fail') return `${call.method}#${call.ordinal}`;
  const what = fault.status === null ? 'net' : String(fault.status);
  return `${call.method}#${call.ordinal}:${what}${fault.afterWrite ? '+lost' : ''}${fault.times > 1 ? `x${fault.times}` : ''}`;
}

/**
 * Wraps the faultable port methods so that each call asks `chooser` first, while an upgrade is
 * under way (`active()`); a chosen fault is armed on the memory adapter for that call and traced
 * as `!`. Publish calls are traced as `P`. Ordinals count per upgrade (`startUpgrade`).
 */
export class PortFaultInjector {
  private readonly counts = new Map<PortMethod, number>();

  constructor(
    private readonly chooser: FaultChooser,
    private readonly active: () => boolean,
    private readonly trace: Trace,
  ) {}

  startUpgrade(): void {
    this.counts.clear();
  }

  /** The cluster survives reboots: its methods are wrapped once. */
  interceptStore(store: MemoryOperationStore): void {
    for (const method of ['markInProgress', 'publish'] as const) {
      wrapMethod(store, method, () => {
        const fault = this.choose(method);
        if (fault?.kind === 'cluster') {
          const options = { status: fault.status, afterWrite: fault.afterWrite };
          store.failTimes(method, fault.times, options);
        }
      });
    }
    wrapMethod(store, 'publish', () => this.trace.add('P', 'publish call'));
  }

  /** The service manager and the container copy are rebuilt at every reboot: wrap each new pair. */
  interceptHost(services: MemoryServiceManager, container: MemoryContainerRootfs): void {
    for (const method of ['scheduleRestart', 'restart', 'waitHealthy', 'convergeAssets'] as const) {
      wrapMethod(services, method, () => {
        if (this.choose(method) !== null) services.failNext(method);
      });
    }
    for (const method of ['install', 'digest'] as const) {
      wrapMethod(container, method, () => {
        if (this.choose(method) !== null) container.failNext(method);
      });
    }
  }

  private choose(method: PortMethod): PortFault | null {
    const ordinal = (this.counts.get(method) ?? 0) + 1;
    this.counts.set(method, ordinal);
    if (!this.active()) return null;
    const call = { method, ordinal };
    const fault = this.chooser(call);
    if (fault !== null) this.trace.add('!', describeFault(call, fault));
    return fault;
  }
}

/** Replaces `target[method]` with a wrapper that runs `before` first (an instance property). */
function wrapMethod<T extends object>(target: T, method: keyof T & string, before: () => void): void {
  const original = target[method];
  if (typeof original !== 'function') throw new TypeError(`${method} is not a method`);
  const bound = (original as (...args: unknown[]) => unknown).bind(target);
  Object.defineProperty(target, method, {
    configurable: true,
    writable: true,
    value: (...args: unknown[]) => {
      before();
      return bound(...args);
    },
  });
}
