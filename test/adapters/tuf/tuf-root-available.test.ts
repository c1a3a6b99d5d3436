/**
 * TufReleaseTrust.checkRootAvailable: what a first refresh needs to start — a root trusted
 * already, or an installed root file that can be read and is TUF root metadata — checked before
 * any refresh (the controller refuses to start without it). It reads only: nothing is written.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { publishedRepository, trustedNode } from './tuf-release-trust-fixtures.js';

describe('checkRootAvailable', () => {
  it('passes with the installed root, and with a trusted root when the installed one is gone', async () => {
    const { repo, mirror } = await publishedRepository();
    const fresh = trustedNode(repo, mirror);
    expect(() => fresh.trust.checkRootAvailable()).not.toThrow();
    expect(fresh.snapshot()).toEqual({});
    const trusted = trustedNode(repo, mirror, { trustedFiles: { 'root.json': repo.trustedRoot().toString('utf8') } });
    rmSync(trusted.rootFile);
    expect(() => trusted.trust.checkRootAvailable()).not.toThrow();
  });

  it.each([
    ['missing', null],
    ['not JSON', 'not json'],
    ['JSON that is not TUF root metadata', JSON.stringify({ signed: { _type: 'timestamp', version: 1 } })],
  ])('an installed root that is %s, with none trusted yet, is E_TRUST_METADATA', async (_name, text) => {
    const { repo, mirror } = await publishedRepository();
    const node = trustedNode(repo, mirror);
    if (text === null) rmSync(node.rootFile);
    else writeFileSync(node.rootFile, text);
    expect(() => node.trust.checkRootAvailable()).toThrow(expect.objectContaining({ code: 'E_TRUST_METADATA' }));
    expect(node.snapshot()).toEqual({});
  });
});
