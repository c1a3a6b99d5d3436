import type { Clock } from '../../../ports/common/clock.js';
import type { Logger } from '../../../ports/common/logger.js';
import type { KubeClient } from '../../common/kubernetes/kube-client.js';
import { messageOf } from '../../../domain/common/message-of.js';

/** The local Node's labels for machineSelector operations, read at most once per TTL. */
export class NodeLabels {
  private cached: { readonly labels: Readonly<Record<string, string>> | null; readonly atMs: number } | null = null;

  constructor(
    private readonly client: KubeClient,
    private readonly machineName: string,
    private readonly ttlMs: number,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** `null` when the Node cannot be read: machineSelector operations then match nothing. */
  async get(): Promise<Readonly<Record<string, string>> | null> {
    const nowMs = this.clock.monotonicMs();
    if (this.cached !== null && nowMs - this.cached.atMs < this.ttlMs) return this.cached.labels;
    let labels: Readonly<Record<string, string>> | null = null;
    try {
      labels = await this.client.nodeLabels(this.machineName);
    } catch (error) {
      this.logger.warn(
        {},
        `The Node ${this.machineName} cannot be read (${messageOf(error)}); machineSelector operations are not matched.`,
      );
    }
    this.cached = { labels, atMs: nowMs };
    return labels;
  }
}
