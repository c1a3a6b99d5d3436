import type { NodeCondition } from '../activation/slot-effects.js';
import type { ActivationReport, PreflightReport } from '../activation/activation-report.js';

export function renderPreflight(report: PreflightReport): string[] {
  return [
    `Candidate:      ${report.candidate}${report.candidateSha256 === '' ? '' : ` (sha256:${report.candidateSha256})`}`,
    `Active binary:  ${report.activeBinary ?? 'none found'}`,
    `Install target: ${report.installTarget}`,
    `Current link:   ${report.currentLink}`,
    `Last-good link: ${report.lastGoodLink}`,
    `Initialise the managed layout: ${report.initializeLayout ? 'yes' : 'no'}`,
    'Planned actions:',
    ...report.actions.map((action) => `  - ${action}`),
    'Preflight: no changes applied.',
  ];
}

export function renderActivation(report: ActivationReport): string[] {
  const version = report.candidateVersion === '' ? '' : ` (version ${report.candidateVersion})`;
  switch (report.outcome) {
    case 'activated':
      return [
        `Activated ${report.to}${version}: ${report.from} -> ${report.to}.${report.restarted ? ' The agent restarted and is healthy.' : ' The agent service was not running and stays stopped.'}`,
      ];
    case 'unchanged':
      return [
        `The candidate is identical to the ${report.to} slot${version}; nothing was installed.${report.restarted ? ' The agent was restarted.' : ''}`,
      ];
    case 'rolled-back':
      return [
        `Activation of ${report.to}${version} failed (${report.failure?.code ?? ''}: ${report.failure?.message ?? ''}); rolled back to ${report.from}.${report.quarantined ? ' Its digest is quarantined.' : ''}`,
      ];
    case 'degraded':
      return [
        `Activation of ${report.to}${version} failed (${report.failure?.code ?? ''}: ${report.failure?.message ?? ''}), and rolling back to ${report.from} failed too (${report.rollbackFailure?.code ?? ''}: ${report.rollbackFailure?.message ?? ''}).`,
        describeNode(report.node),
      ];
  }
}

/** One line on where a node stands after a failure that could not be undone. */
export function describeNode(node: NodeCondition | null): string {
  if (node === null) return 'The node state is unknown; run `agent-upgrade status`.';
  return `Node: current names ${node.current ?? 'no slot'}; the agent service is ${node.service}. Run \`agent-upgrade status\` and \`agent-upgrade rollback\` once the cause is fixed.`;
}
