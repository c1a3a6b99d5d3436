import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeFileSystem } from '../../src/adapters/node/host/node-file-system.js';
import { fileSystemContract } from '../contracts/file-system.contract.js';

fileSystemContract('NodeFileSystem', async () => {
  const root = await mkdtemp(join(tmpdir(), 'agent-upgrade-fs-'));
  return {
    fs: new NodeFileSystem(),
    root,
    cleanup: () => rm(root, { recursive: true, force: true }),
    makeFifo: async (path: string) => {
      execFileSync('mkfifo', [path]);
    },
  };
});
