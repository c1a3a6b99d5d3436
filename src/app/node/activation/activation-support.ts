import type { Sha256 } from '../../../domain/common/digest.js';
import { planActivation, type ActivationPlan } from '../../../domain/node/activation/upgrade-plan.js';
import { failure, type Result } from '../../../domain/common/failure.js';
import type { LayoutFacts } from '../../../domain/node/layout/host-facts.js';
import { parseVersion, type Version } from '../../../domain/common/version.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import type { ContainerRootfs } from '../../../ports/node/container-rootfs.js';
import type { ServiceManager } from '../../../ports/node/service-manager.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { raise, unwrap } from '../../common/failure-signal.js';
import type { LayoutEngine } from '../layout/layout-engine.js';

/** The binary the agent runs now: what current resolves to or, on a host not yet managed, the legacy file. */
export async function activeBinary(
  deps: { readonly fs: FileSystem; readonly engine: LayoutEngine; readonly config: UpgraderConfig },
  facts: LayoutFacts,
): Promise<{ readonly path: string; readonly digest: Sha256 } | null> {
  const current =
    facts.current.kind === 'symlink' && facts.current.resolved.kind === 'file' ? facts.current.resolved.path : null;
  const path = current ?? (facts.entry.kind === 'file' ? deps.engine.layout.entry : null);
  if (path === null) return null;
  return { path, digest: (await deps.fs.hashFile(path, deps.config.artifact.maxBinaryBytes)).sha256 };
}

export function parseRequestedVersion(text: string): Result<Version> {
  const parsed = parseVersion(text);
  return parsed.ok
    ? parsed
    : { ok: false, failure: failure('E_USAGE', '--version must be of the form [v]MAJOR.MINOR.PATCH') };
}

/** Whether the agent service runs (or is failing and restarting); `unknown` is refused. */
export async function serviceIsActive(services: ServiceManager): Promise<boolean> {
  const activity = await services.activity();
  if (activity === 'unknown') raise(failure('E_SERVICE', 'the agent service is in an unexpected state'));
  return activity === 'active' || activity === 'failed';
}

/** The direct plan on the host as observed; the container is present when a machine is active. */
export async function planDirect(
  deps: { readonly engine: LayoutEngine; readonly container: ContainerRootfs; readonly config: UpgraderConfig },
  facts: LayoutFacts,
  candidateDigest: Sha256,
  activeDigest: Sha256,
  serviceActive: boolean,
  serviceAssetsCurrent: boolean,
): Promise<ActivationPlan> {
  return unwrap(
    planActivation({
      layout: deps.engine.layout,
      facts,
      candidateDigest,
      activeDigest,
      serviceAssetsCurrent,
      serviceActive,
      containerPresent: (await deps.container.activeMachine()) !== null,
      watchMs: deps.config.health.watchMs,
    }),
  );
}
