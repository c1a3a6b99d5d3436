import { linkedSlot } from '../../../domain/node/layout/host-facts.js';
import { slotPath } from '../../../domain/node/layout/slot-layout.js';
import { otherSlot } from '../../../domain/node/layout/slot.js';
import { describeStep } from '../../../domain/node/activation/activation-steps.js';
import type { FetchDependencies } from '../artifact/fetch-member.js';
import { fetchToFile } from '../artifact/fetch-to-file.js';
import { checkRelease } from '../artifact/release-source.js';
import { unwrap } from '../../common/failure-signal.js';
import type { Activation, ActivationDependencies, ActivateRequest } from './activation.js';
import type { ActivationReport, PreflightReport } from './activation-report.js';
import { parseRequestedVersion, serviceIsActive } from './activation-support.js';

/** `install` verifies its download itself: a signed target or an unsigned acceptance is for `activate FILE`. */
export interface InstallRequest extends Omit<ActivateRequest, 'candidatePath' | 'signedTarget' | 'acceptUnsigned'> {
  readonly url: string;
  readonly sha256?: string | undefined;
  readonly onProgress?: (archiveBytes: number, totalBytes: number | null) => void;
}

/** What `install --url` uses: the download, and the activation it feeds. */
export interface InstallDependencies
  extends
    FetchDependencies,
    Pick<ActivationDependencies, 'logger' | 'config' | 'arch' | 'clock' | 'engine' | 'services' | 'container'> {
  readonly activation: Activation;
}

/**
 * `install --url`: the artifact pipeline feeding the same activation. Every refusal that needs
 * no download (the request itself, a pending managed upgrade) comes first, and the download and
 * the candidate checks come before the layout is touched, so a bad URL, a 404 or a refused
 * candidate leaves the host as it was. The member lands in a private temp file (named like a
 * temp of a layout file, so a crash leaves nothing the next sweep would miss): in the slot
 * directory, or beside the legacy entry on a host not yet migrated.
 */
export async function installFromUrl(deps: InstallDependencies, request: InstallRequest): Promise<ActivationReport> {
  validateRequest(deps, request);
  await deps.activation.refuseWhilePending();
  const staging = await stagingPath(deps);
  try {
    const fetched = await fetchToFile(deps, {
      url: request.url,
      sha256: request.sha256,
      output: staging,
      ...(request.onProgress === undefined ? {} : { onProgress: request.onProgress }),
      // Ctrl-C during the download ends it at once: nothing has changed yet (exit 1).
      ...(request.signal === undefined ? {} : { signal: request.signal }),
    });
    return await deps.activation.activate({
      candidatePath: staging,
      candidateIsPrivate: true,
      requestedVersion: request.requestedVersion,
      allowDowngrade: request.allowDowngrade,
      force: request.force,
      signal: request.signal,
      onHealthProgress: request.onHealthProgress,
      ...(fetched.signedVersion === null ? {} : { signedVersion: fetched.signedVersion }),
    });
  } finally {
    await deps.fs.remove(staging);
  }
}

/** What `install` would do, without downloading or changing anything: the target is the inactive slot. */
export async function previewInstall(deps: InstallDependencies, request: InstallRequest): Promise<PreflightReport> {
  const { layout } = deps.engine;
  const source = validateRequest(deps, request);
  await deps.activation.refuseWhilePending();
  const facts = await deps.engine.inspect();
  const current = linkedSlot(facts, 'current');
  const target = otherSlot(current);
  // As activate's plan: what follows the switch depends on the platform and on the agent's
  // state (a stopped agent stays stopped; the none manager restarts nothing).
  const followUp = [
    ...((await deps.services.assetsCurrent()) ? [] : [describeStep(layout, { kind: 'update-service-assets' })]),
    ...((await serviceIsActive(deps.services))
      ? [
          describeStep(layout, { kind: 'restart-service' }),
          describeStep(layout, { kind: 'wait-healthy', slot: target }),
        ]
      : []),
    ...((await deps.container.activeMachine()) === null
      ? []
      : [describeStep(layout, { kind: 'sync-container', slot: target })]),
  ];
  return {
    candidate: source.url.toString(),
    candidateSha256: source.digest ?? '',
    activeBinary: current === null ? null : slotPath(layout, current),
    installTarget: slotPath(layout, target),
    currentLink: layout.current,
    lastGoodLink: layout.lastGood,
    initializeLayout: current === null,
    candidateChanged: true,
    actions: [
      'download the archive, verify its digest and extract the member',
      'verify the candidate binary',
      ...(current === null ? ['initialise the managed layout'] : []),
      `install the candidate into ${slotPath(layout, target)} (or keep the current slot when the binary is identical)`,
      `switch ${layout.current} to it`,
      ...followUp,
      `roll back to ${current === null ? 'the previous binary' : slotPath(layout, current)} if activation fails`,
    ],
  };
}

/** The request's own refusals (`E_INVALID_URL`, `E_INVALID_DIGEST`, `E_INSECURE_SOURCE`, `E_USAGE`). */
function validateRequest(deps: InstallDependencies, request: InstallRequest) {
  const checked = checkRelease(deps, request);
  if (request.requestedVersion !== undefined) unwrap(parseRequestedVersion(request.requestedVersion));
  return { url: checked.source.url, digest: checked.requested };
}

/**
 * The layout's staging file: in the slot directory when it exists, so the install is a rename;
 * beside the legacy entry on a host not yet migrated, where the slot directory is still missing.
 */
async function stagingPath(deps: InstallDependencies): Promise<string> {
  const { layout } = deps.engine;
  return (await deps.fs.lstat(layout.slotDir))?.kind === 'directory'
    ? layout.downloadStaging
    : layout.legacyDownloadStaging;
}
