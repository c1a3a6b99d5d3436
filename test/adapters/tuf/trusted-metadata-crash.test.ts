import { describe, expect, it } from 'vitest';
import { publishedRepository, trustedNode, type TrustedNode } from './tuf-release-trust-fixtures.js';

const RELEASE = 'releases/agent-2.0.0.tar.gz';

class Crash extends Error {}

/** Each trusted file's signed version, by file name (temps and scratch directories left out). */
function versions(node: TrustedNode): Record<string, number> {
  return Object.fromEntries(
    Object.entries(node.snapshot())
      .filter(([name]) => !name.startsWith('.'))
      .map(([name, text]) => [name, (JSON.parse(text) as { signed: { version: number } }).signed.version]),
  );
}

/**
 * A crash (power loss) before any durable step of a refresh — a temp written, a rename, a
 * directory sync — while the node moves from one repository state to the next: a new root (with a
 * new timestamp key), new targets, snapshot and timestamp. Afterwards every trusted file is the
 * old or the new verified one, none is missing, and the next refresh reaches the new state.
 */
describe('trusted metadata across a crash at every durable step of a refresh', () => {
  it('is the old or the new, never less, and the next refresh converges', async () => {
    const { repo, mirror } = await publishedRepository();
    const first = trustedNode(repo, mirror);
    await first.trust.lookup(RELEASE);
    const oldFiles = first.snapshot();
    const oldVersions = versions(first);
    repo.rotateRoot({ rotateRoles: ['timestamp'] });
    repo.addTarget(
      'releases/agent-3.0.0.tar.gz',
      { content: 'three' },
      { custom: { version: '3.0.0', arch: 'amd64' } },
    );
    repo.publish();

    const steps: string[] = [];
    const clean = trustedNode(repo, mirror, { trustedFiles: oldFiles, beforeDurableStep: (step) => steps.push(step) });
    await clean.trust.lookup(RELEASE);
    const newVersions = versions(clean);
    expect(newVersions).toMatchObject({ 'root.json': 2 });
    expect(steps.length).toBe(12);

    for (const [index, step] of steps.entries()) {
      let taken = 0;
      const crashAt = (): void => {
        if (taken++ === index) throw new Crash(step);
      };
      const node = trustedNode(repo, mirror, { trustedFiles: oldFiles, beforeDurableStep: crashAt });
      await expect(node.trust.lookup(RELEASE), step).rejects.toBeTruthy();
      const after = versions(node);
      expect(Object.keys(after).sort(), step).toEqual(Object.keys(oldVersions).sort());
      for (const [name, version] of Object.entries(after))
        expect([oldVersions[name], newVersions[name]], `${step}: ${name}`).toContain(version);
      const restarted = trustedNode(repo, mirror, { trustedFiles: node.snapshot() });
      expect((await restarted.trust.lookup('releases/agent-3.0.0.tar.gz')).target, step).not.toBeNull();
      expect(versions(restarted), step).toEqual(newVersions);
    }
  });
});
