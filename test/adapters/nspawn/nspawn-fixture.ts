import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ContainerError, type ContainerErrorCode } from '../../../src/domain/common/port-errors.js';
import { NspawnContainerRootfs } from '../../../src/adapters/node/nspawn/nspawn-container-rootfs.js';
import { makeScratch, writeExecutable } from '../../support/real-tree.js';

export const BINARY_PATH = '/usr/local/bin/aks-flex-node';
export const MACHINES = ['kube1', 'kube2'] as const;

/**
 * A scratch host: <root>/machines/kube1 (an empty rootfs), a source binary to copy, and a
 * host-side "/usr/local/bin/aks-flex-node" outside the machines directory that a planted link
 * would aim at. `rootfs(maxBytes)` builds the adapter over it.
 */
export interface NspawnScratch {
  readonly root: string;
  readonly machinesDir: string;
  readonly statePath: string;
  readonly source: string;
  readonly hostBinDir: string;
  readonly hostBinary: string;
  /** Where kube1's copy lands. */
  readonly target: string;
  rootfs(maxBytes?: number): NspawnContainerRootfs;
  cleanup(): void;
}

export function makeNspawnScratch(): NspawnScratch {
  const scratch = makeScratch('nspawn-rootfs-test-');
  const root = scratch.root;
  const machinesDir = join(root, 'machines');
  mkdirSync(join(machinesDir, 'kube1'), { recursive: true });
  const source = join(root, 'source', 'agent');
  writeExecutable(source, 'agent v2\n');
  const hostBinDir = join(root, 'host', 'usr', 'local', 'bin');
  const hostBinary = join(hostBinDir, 'aks-flex-node');
  writeExecutable(hostBinary, 'HOST BINARY\n');
  const statePath = join(root, 'etc', 'daemon-state.json');
  mkdirSync(join(root, 'etc'));
  return {
    root,
    machinesDir,
    statePath,
    source,
    hostBinDir,
    hostBinary,
    target: join(machinesDir, 'kube1', 'usr', 'local', 'bin', 'aks-flex-node'),
    rootfs: (maxBytes = 1024 * 1024) =>
      new NspawnContainerRootfs({
        daemonStatePath: statePath,
        machinesDir,
        machines: MACHINES,
        binaryPath: BINARY_PATH,
        maxBytes,
      }),
    cleanup: scratch.cleanup,
  };
}

export function sha256Of(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export function writeSource(path: string, content: string | Uint8Array): void {
  writeFileSync(path, content);
}

export function listDir(path: string): string[] {
  return readdirSync(path).sort();
}

/** The ContainerError code a call fails with; anything else (or success) fails the test. */
export async function containerErrorCode(promise: Promise<unknown>): Promise<ContainerErrorCode> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ContainerError) return error.code;
    throw error;
  }
  throw new Error('expected a ContainerError, but the call succeeded');
}
