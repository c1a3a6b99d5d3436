import { afterEach, beforeEach, describe } from 'vitest';
import { moveFileAtomicContract } from './move-file.contract.js';
import { readingContract, readRangeContract } from './file-system.read.contract.js';
import type { FileSystemFixture } from './file-system.support.js';
import { ensureDirectoryContract, removeContract, replaceSymlinkContract } from './file-system.tree.contract.js';
import { copyFileAtomicContract, stageFileContract, writeFileAtomicContract } from './file-system.write.contract.js';

export type { FileSystemFixture } from './file-system.support.js';

/**
 * Behaviour every FileSystem must show; assertions are on error codes and resulting state only.
 * Each operation's cases live in a part (file-system.write, .tree and .read.contract.ts and
 * move-file.contract.ts); this registers them all, in one describe, on a fresh fixture per case.
 */
export function fileSystemContract(name: string, makeFs: () => Promise<FileSystemFixture>): void {
  describe(`FileSystem contract: ${name}`, () => {
    let fixture: FileSystemFixture | undefined;

    beforeEach(async () => {
      fixture = await makeFs();
    });
    afterEach(async () => {
      await fixture?.cleanup();
      fixture = undefined;
    });

    const current = (): FileSystemFixture => {
      if (fixture === undefined) throw new Error('no fixture: the case runs outside the contract');
      return fixture;
    };

    writeFileAtomicContract(current);
    copyFileAtomicContract(current);
    moveFileAtomicContract(current);
    replaceSymlinkContract(current);
    readingContract(current);
    removeContract(current);
    readRangeContract(current);
    stageFileContract(current);
    ensureDirectoryContract(current);
  });
}
