// `activate FILE` on a node that trusts signed releases: the candidate must be a signed binary
// target for this architecture (`--signed-target`), or the operator accepts it unsigned
// (`--unsigned`, logged and shown in status); otherwise nothing changes.
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TufTestRepo } from '../../support/tuf/tuf-repo-tool.js';
import { FLEX_SANDBOX_PATHS as P } from '../../support/sandbox-upgrader.js';
import { writeExecutable } from '../../support/real-tree.js';
import { agentScript, ARCH, signedNode, signedRepository, type SignedNode } from './signed-install-fixtures.js';

const codeOf = (result: { ok: boolean; failure?: { code: string } }): string =>
  result.ok ? 'ok' : (result.failure?.code ?? '?');

const OTHER_ARCH = ARCH === 'amd64' ? 'arm64' : 'amd64';

/** Publishes bare binaries as targets: the release's own, and ones that differ from it in one signed fact. */
function publishBinaries(repo: TufTestRepo): void {
  const sign = (path: string, script: string, version: string, arch: unknown) =>
    repo.addTarget(path, { content: script }, { custom: { version, arch } });
  sign('bin/2.0.0/agent', agentScript('2.0.0'), '2.0.0', ARCH);
  sign('bin/2.0.0/agent-other-arch', agentScript('2.0.0'), '2.0.0', OTHER_ARCH);
  sign('bin/2.1.0/agent', agentScript('2.0.9'), '2.1.0', ARCH);
  repo.publish();
}

async function nodeWithCandidate(script: string): Promise<{ node: SignedNode; candidate: string }> {
  const { repo, mirror } = await signedRepository();
  publishBinaries(repo);
  const node = await signedNode(repo, mirror);
  const candidate = node.at('/var/tmp/candidate');
  writeExecutable(candidate, script);
  return { node, candidate };
}

describe('activate FILE under signed releases', () => {
  it('activates a candidate whose bytes are the signed target named, at the signed version', async () => {
    const { node, candidate } = await nodeWithCandidate(agentScript('2.0.0'));
    const activated = await node.upgrader.activate({ candidatePath: candidate, signedTarget: 'bin/2.0.0/agent' });
    expect(activated).toMatchObject({ ok: true, value: { outcome: 'activated', candidateVersion: '2.0.0' } });
    expect(readFileSync(node.at(P.green), 'utf8')).toBe(agentScript('2.0.0'));
    const status = await node.upgrader.status();
    expect(status.ok && status.value.slots.green).toMatchObject({ version: '2.0.0', acceptedUnsigned: false });
  });

  it.each([
    ['no signature named', {}],
    ['a target the metadata does not sign', { signedTarget: 'bin/9.9.9/agent' }],
    ['a target signed for another architecture', { signedTarget: 'bin/2.0.0/agent-other-arch' }],
    ['a target with other bytes', { signedTarget: 'bin/2.1.0/agent' }],
  ])('refuses with %s: E_UNTRUSTED, nothing changed', async (_name, flags) => {
    const { node, candidate } = await nodeWithCandidate(agentScript('2.0.0'));
    const before = node.tree();
    expect(codeOf(await node.upgrader.activate({ candidatePath: candidate, ...flags }))).toBe('E_UNTRUSTED');
    expect(node.tree()).toEqual(before);
  });

  it('refuses the signed bytes when they print another version than the signed one (mix-and-match)', async () => {
    const { node, candidate } = await nodeWithCandidate(agentScript('2.0.9'));
    const before = node.tree();
    const activated = await node.upgrader.activate({ candidatePath: candidate, signedTarget: 'bin/2.1.0/agent' });
    expect(codeOf(activated)).toBe('E_UNTRUSTED');
    expect(node.tree()).toEqual(before);
  });

  it('refuses both a signed target and --unsigned: E_USAGE, nothing changed', async () => {
    const { node, candidate } = await nodeWithCandidate(agentScript('2.0.0'));
    const before = node.tree();
    const request = { candidatePath: candidate, signedTarget: 'bin/2.0.0/agent', acceptUnsigned: true };
    expect(codeOf(await node.upgrader.activate(request))).toBe('E_USAGE');
    expect(codeOf(await node.upgrader.preflight(request))).toBe('E_USAGE');
    expect(node.tree()).toEqual(before);
  });

  it('refuses in --preflight too when no signature is named', async () => {
    const { node, candidate } = await nodeWithCandidate(agentScript('2.0.0'));
    expect(codeOf(await node.upgrader.preflight({ candidatePath: candidate }))).toBe('E_UNTRUSTED');
  });

  it('ignores a signed version a library caller claims: only install learns one', async () => {
    const { node, candidate } = await nodeWithCandidate(agentScript('2.0.0'));
    const claim = { candidatePath: candidate, signedVersion: '2.0.0' };
    expect(codeOf(await node.upgrader.activate(claim))).toBe('E_UNTRUSTED');
  });
});

describe('activate FILE --unsigned under signed releases', () => {
  it('activates, warns, and status marks the slot until signed bytes replace the mark', async () => {
    const { node, candidate } = await nodeWithCandidate(agentScript('3.0.0'));
    const activated = await node.upgrader.activate({ candidatePath: candidate, acceptUnsigned: true });
    expect(activated).toMatchObject({ ok: true, value: { outcome: 'activated', candidateVersion: '3.0.0' } });
    const digest = activated.ok ? activated.value.candidateSha256 : '';
    const warnings = node.logger.lines.filter((line) => line.level === 'warn' && 'digest' in line.fields);
    expect(warnings.map((line) => line.fields)).toEqual([expect.objectContaining({ digest })]);
    const status = await node.upgrader.status();
    expect(status.ok && status.value.slots.green).toMatchObject({ sha256: digest, acceptedUnsigned: true });
    expect(status.ok && status.value.slots.blue.acceptedUnsigned).toBe(false);
    const state = JSON.parse(readFileSync(node.at(P.state), 'utf8')) as { unsignedAccepted?: string[] };
    expect(state.unsignedAccepted).toEqual([digest]);
  });

  it('forgets the acceptance when the same bytes are later activated as a signed target', async () => {
    const { node, candidate } = await nodeWithCandidate(agentScript('2.0.0'));
    const unsigned = await node.upgrader.activate({ candidatePath: candidate, acceptUnsigned: true });
    expect(codeOf(unsigned)).toBe('ok');
    // Back to 1.0.0 in the other slot, then the same 2.0.0 bytes again, this time signed.
    writeFileSync(candidate, agentScript('2.0.0'));
    const signed = await node.upgrader.activate({ candidatePath: candidate, signedTarget: 'bin/2.0.0/agent' });
    expect(signed).toMatchObject({ ok: true, value: { outcome: 'unchanged' } });
    const state = JSON.parse(readFileSync(node.at(P.state), 'utf8')) as { unsignedAccepted?: string[] };
    expect(state.unsignedAccepted).toBeUndefined();
  });
});
