import type { HostArchitecture } from '../../../domain/node/artifact/archive-rules.js';

/** This machine's release architecture (Node's `x64` is Go's and the releases' `amd64`). */
export function hostArchitecture(arch: string = process.arch): HostArchitecture | null {
  if (arch === 'x64') return 'amd64';
  if (arch === 'arm64') return 'arm64';
  return null;
}
