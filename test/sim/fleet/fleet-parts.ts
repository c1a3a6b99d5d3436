/** The small parts a simulated fleet is built with: quiet logs, informer settings, seeded uids. */
import type { InformerSettings } from '../../../src/adapters/fleet/kubernetes/informer.js';
import type { ControllerMetrics } from '../../../src/ports/fleet/controller-metrics.js';
import type { LogFields, Logger } from '../../../src/ports/common/logger.js';
import { Prng } from '../harness/index.js';

export function informerSettings(prng: Prng): InformerSettings {
  return {
    pageSize: 500,
    watchTimeoutMinSeconds: 300,
    watchTimeoutMaxSeconds: 600,
    idleTimeoutMs: 3_600_000,
    retryDelayMs: 1_000,
    retryDelayMaxMs: 30_000,
    unauthorized: { attempts: 5, windowMs: 180_000 },
    random: () => prng.next(),
  };
}

export const NO_METRICS: ControllerMetrics = {
  rolloutObserved: () => undefined,
  rolloutForgotten: () => undefined,
  halted: () => undefined,
  reconciled: () => undefined,
  apiRequest: () => undefined,
  leading: () => undefined,
  trustMetadataObserved: () => undefined,
};

/** Keeps the first warnings and errors (a run that fails says why); drops everything else. */
export class WarningLog implements Logger {
  readonly lines: string[] = [];

  debug(): void {}
  info(): void {}
  warn(fields: LogFields, message: string): void {
    if (this.lines.length < 200) this.lines.push(`warn ${message} ${JSON.stringify(fields)}`);
  }
  error(fields: LogFields, message: string): void {
    if (this.lines.length < 200) this.lines.push(`error ${message} ${JSON.stringify(fields)}`);
  }
  child(): Logger {
    return this;
  }
}

/** UUID-shaped, from a seeded generator: the same seed names every object the same. */
export function seededUids(seed: number): () => string {
  const prng = new Prng(seed * 7919 + 1);
  const hex = (): string => prng.nextUint32().toString(16).padStart(8, '0');
  return () => {
    const [a, b, c, d] = [hex(), hex(), hex(), hex()];
    return `${a}-${b.slice(0, 4)}-4${b.slice(5, 8)}-8${c.slice(1, 4)}-${c.slice(4)}${d}`;
  };
}
