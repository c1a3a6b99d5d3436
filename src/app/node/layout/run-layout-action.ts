import type { LayoutAction } from '../../../domain/node/layout/migration-plan.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';

/**
 * Bytes a seed copy may read; a slot holds at most this much (`artifact.maxBinaryBytes`, 256 MiB by
 * default).
 */
export interface ActionLimits {
  readonly binaryMaxBytes: number;
}

/** Runs exactly one layout action through exactly one port call: one action, one crash point. */
export async function runLayoutAction(
  fs: FileSystem,
  services: ServiceManager,
  limits: ActionLimits,
  action: LayoutAction,
): Promise<void> {
  switch (action.kind) {
    case 'create-slot-directory':
      await fs.ensureDirectory(action.path, action.mode);
      return;
    case 'seed-slot':
      await fs.copyFileAtomic(action.source, action.target, { mode: action.mode, maxBytes: limits.binaryMaxBytes });
      return;
    case 'point-link':
      await fs.replaceSymlink(action.link, action.text);
      return;
    case 'remove-stale-temp':
      await fs.remove(action.path);
      return;
    case 'converge-service-assets':
      await services.convergeAssets();
      return;
  }
}

export function describeLayoutAction(action: LayoutAction): string {
  switch (action.kind) {
    case 'create-slot-directory':
      return `create ${action.path} (mode ${action.mode.toString(8)})`;
    case 'seed-slot':
      return `copy ${action.source} into the ${action.slot} slot ${action.target}`;
    case 'point-link':
      return `point ${action.link} at ${action.text}`;
    case 'remove-stale-temp':
      return `remove ${action.path}, left behind by an interrupted write`;
    case 'converge-service-assets':
      return 'write the service units and recovery script, and reload the service manager';
  }
}
