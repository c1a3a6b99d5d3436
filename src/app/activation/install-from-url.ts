import { parseOptionalSha256 } from '../../domain/digest.js';
import { linkedSlot } from '../../domain/host-facts.js';
import { slotPath } from '../../domain/slot-layout.js';
import { otherSlot } from '../../domain/slot.js';
import { parseDownloadUrl } from '../../domain/url-policy.js';
import type { ArchiveExtractor } from '../../ports/archive-extractor.js';
import type { ArtifactSource } from '../../ports/artifact-source.js';
import { fetchToFile } from '../artifact/fetch-to-file.js';
import { unwrap } from '../failure-signal.js';
import type { Activation, ActivationDependencies, ActivateRequest } from './activation.js';
import type { ActivationReport, PreflightReport } from './activation-report.js';

export interface InstallRequest extends Omit<ActivateRequest, 'candidatePath' | 'candidateIsPrivate'> {
  readonly url: string;
  readonly sha256?: string | undefined;
  readonly onProgress?: (archiveBytes: number, totalBytes: number | null) => void;
}

export interface InstallDependencies extends ActivationDependencies {
  readonly source: ArtifactSource;
  readonly extractor: ArchiveExtractor;
  readonly activation: Activation;
}

/**
 * `install --url`: the artifact pipeline feeding the same activation. The member is downloaded
 * into a private file in the slot directory (named like a temp of the blue slot, so a crash
 * leaves nothing the next migration would not sweep) and activated from there.
 */
export async function installFromUrl(deps: InstallDependencies, request: InstallRequest): Promise<ActivationReport> {
  await deps.engine.migrate();
  const { layout } = deps.engine;
  const staging = `${layout.slotDir}/.${layout.blue.slice(layout.slotDir.length + 1)}.tmp-download`;
  try {
    await fetchToFile(deps, {
      url: request.url,
      sha256: request.sha256,
      output: staging,
      ...(request.onProgress === undefined ? {} : { onProgress: request.onProgress }),
    });
    return await deps.activation.activate({ ...request, candidatePath: staging, candidateIsPrivate: true });
  } finally {
    await deps.fs.remove(staging);
  }
}

/** What `install` would do, without downloading or changing anything: the target is the inactive slot. */
export async function previewInstall(deps: InstallDependencies, request: InstallRequest): Promise<PreflightReport> {
  const { layout } = deps.engine;
  const facts = await deps.engine.inspect();
  const current = linkedSlot(facts, 'current');
  const target = otherSlot(current);
  const digest = unwrap(parseOptionalSha256(request.sha256));
  const source = unwrap(parseDownloadUrl(request.url, deps.config.artifact, digest !== null));
  return {
    candidate: source.url.toString(),
    candidateSha256: digest ?? '',
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
      'restart the agent service and wait until it runs the candidate and stays up',
      `roll back to ${current === null ? 'the previous binary' : slotPath(layout, current)} if activation fails`,
    ],
  };
}
