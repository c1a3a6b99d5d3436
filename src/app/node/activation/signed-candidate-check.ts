import {
  checkSignedBytes,
  decideCandidateSignature,
  type CandidateSignatureDecision,
  type CandidateSignatureRequest,
} from '../../../domain/node/activation/candidate-signature.js';
import {
  judgeSignedTarget,
  signedVersionText,
  type TrustedRelease,
} from '../../../domain/common/trust/signed-target.js';
import { invariant } from '../../../domain/common/invariant.js';
import type { ReleaseTrust } from '../../../ports/common/release-trust.js';
import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';
import type { CheckedCandidate } from '../artifact/check-candidate.js';
import type { UpgraderConfig } from '../config/upgrader-config.js';
import { unwrap } from '../../common/failure-signal.js';
import { LogKeys } from '../../common/log-keys.js';
import type { Logger } from '../../../ports/common/logger.js';
import {
  withSignedBinary,
  withUnsignedAccepted,
  type UpgradeState,
} from '../../../domain/node/record/upgrade-state.js';
import type { StateStore } from '../state/state-store.js';
import { checkDirectCandidate, type ActivationInput, type IntakeDependencies } from './candidate-intake.js';
import type { LayoutFacts } from '../../../domain/node/layout/host-facts.js';

export interface SignatureDependencies {
  readonly config: UpgraderConfig;
  readonly trust: ReleaseTrust | null;
  readonly arch: HostArchitecture;
}

/** The signature check of one candidate: decided from the request, the target looked up if one is named. */
export interface CandidateSignature {
  readonly decision: CandidateSignatureDecision;
  /** The signed target the candidate must be (`--signed-target`), verified against fresh metadata. */
  readonly release: TrustedRelease | null;
}

/**
 * Before the candidate is checked: how it must be bound to the publisher, and, for
 * `--signed-target`, the target as the refreshed metadata signs it (its version is then the one
 * the candidate must print). Refusals are coded and come before any change to the host.
 */
async function candidateSignature(deps: SignatureDependencies, request: ActivationInput): Promise<CandidateSignature> {
  const decision = unwrap(decideCandidateSignature(signatureRequest(deps, request)));
  if (decision.kind !== 'verify-target') return { decision, release: null };
  invariant(deps.trust !== null, 'a trust section builds the release trust');
  const lookup = await deps.trust.lookup(decision.targetPath, request.signal);
  const release = unwrap(
    judgeSignedTarget(lookup.target, { targetPath: decision.targetPath, requestedSha256: null, hostArch: deps.arch }),
  );
  return { decision, release };
}

export function signatureRequest(
  deps: Pick<SignatureDependencies, 'config'>,
  request: ActivationInput,
): CandidateSignatureRequest {
  return {
    trustConfigured: deps.config.trust !== null,
    verifiedDownload: request.signedVersion !== undefined,
    signedTarget: request.signedTarget ?? null,
    acceptUnsigned: request.acceptUnsigned === true,
  };
}

/**
 * Every check of a direct candidate, the signature's included, before the first change to the
 * host: the checked bytes, and the state to commit them with.
 */
export async function checkSignedCandidate(
  deps: SignatureDependencies & IntakeDependencies & { readonly states: StateStore; readonly logger: Logger },
  request: ActivationInput,
  known: UpgradeState,
  facts: LayoutFacts,
): Promise<{ readonly checked: CheckedCandidate; readonly state: UpgradeState }> {
  const signature = await candidateSignature(deps, request);
  const signedVersion = signature.release === null ? request.signedVersion : signedVersionText(signature.release);
  const checked = await checkDirectCandidate(deps, { ...request, signedVersion }, known, facts);
  if (signature.release !== null) unwrap(checkSignedBytes(signature.release, checked));
  return { checked, state: await recordSignature(deps, known, signature.decision.kind, checked) };
}

/**
 * An unsigned candidate the operator accepted is remembered before the first change, so `status`
 * names its slot however the activation ends; a signed one clears an earlier acceptance when the
 * activation commits its state.
 */
async function recordSignature(
  deps: { readonly states: StateStore; readonly logger: Logger },
  state: UpgradeState,
  kind: CandidateSignatureDecision['kind'],
  checked: CheckedCandidate,
): Promise<UpgradeState> {
  if (kind === 'not-required') return state;
  if (kind !== 'accept-unsigned') return withSignedBinary(state, checked.digest);
  deps.logger.warn(
    { [LogKeys.digest]: checked.digest },
    'Activating an unsigned candidate (--unsigned): the publisher did not sign these bytes.',
  );
  const next = withUnsignedAccepted(state, checked.digest);
  await deps.states.write(next);
  return next;
}
