import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256FromHex, type Sha256 } from '../../src/domain/common/digest.js';
import type { FileSystem } from '../../src/ports/node/file-system.js';
import { decode, describeTree, expectFailure, text } from './file-system.support.js';

const digestOf = (value: string): Sha256 => sha256FromHex(createHash('sha256').update(value).digest('hex'));

type Current = () => { readonly fs: FileSystem; readonly root: string };

/** FileSystem.moveFileAtomic, part of the contract every FileSystem runs (file-system.contract.ts). */
export function moveFileAtomicContract(current: Current): void {
  describe('moveFileAtomic', () => {
    moveCases(current);
    refusedMoveCases(current);
  });
}

/** Paths, writes, the move itself and the resulting tree, relative to the case's root. */
function moveTools(current: Current) {
  const at = (relative: string): string => `${current().root}/${relative}`;
  return {
    at,
    write: (relative: string, content: string, mode = 0o600): Promise<void> =>
      current().fs.writeFileAtomic(at(relative), text(content), { mode }),
    move: (source: string, target: string, sha256: Sha256, maxBytes = 100) =>
      current().fs.moveFileAtomic(at(source), at(target), { mode: 0o755, maxBytes, sha256 }),
    tree: () => describeTree(current().fs, current().root),
  };
}

/** Moves that succeed. */
function moveCases(current: Current): void {
  const { at, write, move, tree } = moveTools(current);

  it('moves the file over the target with the given mode and returns its digest', async () => {
    const { fs } = current();
    await write('.staged', 'payload');
    await write('target', 'old bytes', 0o644);
    expect(await move('.staged', 'target', digestOf('payload'))).toEqual({ sha256: digestOf('payload'), bytes: 7 });
    expect(await tree()).toEqual({ [at('target')]: { kind: 'file', mode: 0o755, content: 'payload' } });
    expect(await fs.hashFile(at('target'), 100)).toEqual({ sha256: digestOf('payload'), bytes: 7 });
  });

  it('replaces a symlink at the target itself, never the file it points to', async () => {
    const { fs } = current();
    await write('.staged', 'payload');
    await write('elsewhere', 'keep me', 0o644);
    await fs.replaceSymlink(at('target'), 'elsewhere');
    await move('.staged', 'target', digestOf('payload'));
    expect(await tree()).toEqual({
      [at('elsewhere')]: { kind: 'file', mode: 0o644, content: 'keep me' },
      [at('target')]: { kind: 'file', mode: 0o755, content: 'payload' },
    });
  });

  it('is idempotent', async () => {
    await write('.staged', 'payload');
    const first = await move('.staged', 'target', digestOf('payload'));
    const once = await tree();
    expect(await move('.staged', 'target', digestOf('payload'))).toEqual(first);
    expect(await tree()).toEqual(once);
  });
}

/** Moves refused, each leaving the tree as it was. */
function refusedMoveCases(current: Current): void {
  const { at, write, move, tree } = moveTools(current);

  it('refuses a symlink source with ELOOP and changes nothing', async () => {
    const { fs } = current();
    await write('real', 'payload');
    await fs.replaceSymlink(at('.staged'), 'real');
    await write('target', 'old bytes', 0o644);
    const before = await tree();
    await expectFailure(move('.staged', 'target', digestOf('payload')), 'ELOOP');
    expect(await tree()).toEqual(before);
  });

  it('refuses content that is not the expected digest with ECHANGED and changes nothing', async () => {
    await write('.staged', 'tampered');
    await write('target', 'old bytes', 0o644);
    const before = await tree();
    await expectFailure(move('.staged', 'target', digestOf('payload')), 'ECHANGED');
    expect(await tree()).toEqual(before);
  });

  it('refuses past maxBytes with ETOOBIG and changes nothing', async () => {
    await write('.staged', 'payload');
    const before = await tree();
    await expectFailure(move('.staged', 'target', digestOf('payload'), 6), 'ETOOBIG');
    expect(await tree()).toEqual(before);
  });

  it('fails with EISDIR onto a directory, keeping the source', async () => {
    const { fs } = current();
    await write('.staged', 'payload');
    await fs.ensureDirectory(at('target'), 0o755);
    const before = await tree();
    await expectFailure(move('.staged', 'target', digestOf('payload')), 'EISDIR');
    expect(await tree()).toEqual(before);
  });

  it('fails with ENOENT for a missing source unless the target already holds those bytes', async () => {
    await write('target', 'other bytes', 0o755);
    await expectFailure(move('.staged', 'target', digestOf('payload')), 'ENOENT');
    expect(decode(await current().fs.readFile(at('target'), 100))).toBe('other bytes');
  });
}
