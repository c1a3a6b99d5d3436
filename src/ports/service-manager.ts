import type { SlotName } from '../domain/slot.js';

/**
 * The service manager that runs the agent (systemd, the built-in supervisor, or none). Every
 * method is idempotent. Failures are thrown as `ServiceError` (src/domain/port-errors.ts).
 */
export type ServiceActivity = 'active' | 'inactive' | 'failed' | 'absent' | 'unknown';

export type HealthVerdict =
  | { readonly kind: 'healthy'; readonly slot: SlotName }
  | { readonly kind: 'unhealthy'; readonly reason: string }
  | { readonly kind: 'not-running' };

export interface ServiceManager {
  /** Which platform this is, for status output. */
  readonly name: 'systemd' | 'supervisor' | 'none' | 'memory';

  /**
   * Writes the agent unit, the recovery unit and the recovery script when they differ from what
   * is installed, then reloads the manager if anything changed. Returns whether it changed.
   */
  convergeAssets(): Promise<{ readonly changed: boolean }>;

  /** Whether the installed assets already match; never changes anything (preflight). */
  assetsCurrent(): Promise<boolean>;

  activity(): Promise<ServiceActivity>;

  /** Restarts and returns once the manager accepted the restart. Inactive services stay stopped. */
  restart(): Promise<{ readonly restarted: boolean }>;

  /**
   * Waits until the main process runs `slot` continuously for `stableMs`, polling every
   * `pollMs`, for at most `timeoutMs`.
   */
  waitHealthy(slot: SlotName, limits: { readonly timeoutMs: number; readonly stableMs: number; readonly pollMs: number }): Promise<HealthVerdict>;
}
