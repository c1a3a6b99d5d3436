import type { LinkStatus, SlotStatus, StatusReport } from '../status/read-status.js';
import { describeWatch } from '../status/watch-status.js';

/** The text form of `status`: one fact per line, aligned for reading. */
export function renderStatus(status: StatusReport): string[] {
  const lines = [`Root:        ${status.root}`, `Layout:      ${describeLayout(status)}`];
  lines.push(`Current:     ${describeLink(status.links.current)}`);
  lines.push(`Last-good:   ${describeLink(status.links.lastGood)}`);
  lines.push(`Entry:       ${describeLink(status.links.entry)}`);
  lines.push(`Blue slot:   ${describeSlot(status.slots.blue)}`);
  lines.push(`Green slot:  ${describeSlot(status.slots.green)}`);
  if (status.state.problem !== undefined)
    lines.push(`State:       unreadable: ${status.state.problem.code} ${status.state.problem.message}`);
  else {
    lines.push(
      `Quarantine:  ${status.quarantine.length === 0 ? 'none' : status.quarantine.map((digest) => `sha256:${digest}`).join(', ')}`,
    );
    lines.push(
      `Committed:   ${status.highestCommittedVersion === null ? 'no version yet' : `highest version ${status.highestCommittedVersion}`}`,
    );
  }
  lines.push(`Record:      ${describeRecord(status)}`);
  lines.push(`Watch:       ${describeWatch(status.watch)}`);
  lines.push(`Lock:        ${describeLock(status.lock)}`);
  lines.push(
    `Service:     ${status.service.manager}, ${status.service.activity}${status.service.mainExecutable === null ? '' : `, running ${status.service.mainExecutable}`}`,
  );
  lines.push(`Trust:       ${describeTrust(status.trust)}`);
  return lines;
}

function describeTrust(trust: StatusReport['trust']): string {
  if (trust === null) return 'none: releases are not signed (no trust section)';
  const roles = trust.roles.map((role) => `${role.role} v${role.version} until ${role.expires}`);
  return `tuf ${trust.metadataUrl}; ${roles.length === 0 ? 'nothing verified yet' : roles.join(', ')}`;
}

function describeLayout(status: StatusReport): string {
  const { layout } = status;
  if (layout.condition === 'invalid')
    return `invalid: ${layout.problem?.code ?? ''} ${layout.problem?.message ?? ''}`.trim();
  if (layout.condition === 'needs-migration')
    return `needs migration (${layout.pendingChanges} change${layout.pendingChanges === 1 ? '' : 's'}; run migrate)`;
  return 'managed';
}

function describeLink(link: LinkStatus): string {
  if (link.text === null) return link.resolvesTo === null ? `${link.path} (absent)` : `${link.path} (regular file)`;
  const target = link.resolvesTo ?? 'nothing (dangling)';
  return `${link.path} -> ${link.text} => ${target}${link.slot === null ? '' : ` [${link.slot}]`}`;
}

function describeLock(lock: StatusReport['lock']): string {
  if (lock.problem !== undefined) return `unreadable: ${lock.problem.code} ${lock.problem.message}`;
  const { holder } = lock;
  if (holder === null) return 'free';
  if (holder.kind === 'unknown')
    return `held by ${holder.pid === null ? 'a process not visible from here' : `pid ${holder.pid}`} (not described)`;
  return `held by pid ${holder.pid} (${holder.command}) since ${new Date(holder.sinceMs).toISOString()}`;
}

function describeSlot(slot: SlotStatus): string {
  if (!slot.present) return `${slot.path} (absent)`;
  if (slot.problem !== undefined)
    return `${slot.path} (cannot be digested: ${slot.problem.code} ${slot.problem.message})`;
  if (slot.sha256 === null) return `${slot.path} (not a regular file)`;
  const version = slot.version === null ? '' : `, version ${slot.version}`;
  const unsigned = slot.acceptedUnsigned ? ' (unsigned: activated with --unsigned)' : '';
  return `${slot.path} sha256:${slot.sha256} ${slot.bytes ?? 0} bytes${version}${slot.executable ? '' : ' (not executable)'}${unsigned}`;
}

function describeRecord(status: StatusReport): string {
  const { record } = status;
  if (!record.present) return 'none';
  if (!record.valid) return `invalid: ${record.problem.code} ${record.problem.message}`;
  const value = record.record;
  const failure = value.failure === null ? '' : `, failed: ${value.failure.reason} ${value.failure.code}`;
  return `operation ${value.operation.name}, candidate ${value.candidate ?? 'not chosen'}, switch ${value.switchCommitted ? 'committed' : 'not committed'}${failure}`;
}
