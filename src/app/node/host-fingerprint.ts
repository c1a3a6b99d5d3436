import { dirnamePath, joinPath } from '../../domain/node/layout/posix-path.js';
import type { SlotLayout } from '../../domain/node/layout/slot-layout.js';
import type { FileSystem } from '../../ports/node/file-system.js';
import type { UpgraderConfig } from './config/upgrader-config.js';

/**
 * What the host looks like, as far as the upgrader changes it: every layout file and link, the
 * record, the state, the marker and the service units, each by kind, owner, mode and content.
 * Compared before and after a failed command, it answers truthfully whether the host changed
 * (exit 1 versus exit 5) without every effect having to report itself.
 */
export async function hostFingerprint(fs: FileSystem, layout: SlotLayout, config: UpgraderConfig): Promise<string> {
  const paths = [
    layout.entry,
    layout.slotDir,
    layout.blue,
    layout.green,
    layout.current,
    layout.lastGood,
    layout.recoveryScript,
    layout.record,
    layout.activation,
    layout.watch,
    layout.state,
    joinPath(layout.unitDir, config.service.unit),
    joinPath(layout.unitDir, config.service.recoveryUnit),
  ];
  const parts: string[] = [];
  for (const path of paths) parts.push(`${path}=${await describeEntry(fs, path, config.artifact.maxBinaryBytes)}`);
  // The directories a command may create on the way (the slot directory's parents, /etc/…).
  for (const directory of ancestors(paths, layout.root))
    parts.push(`${directory}=${(await fs.lstat(directory))?.kind ?? 'absent'}`);
  return parts.join('\n');
}

function ancestors(paths: readonly string[], root: string): string[] {
  const found = new Set<string>();
  for (const path of paths) {
    for (
      let directory = dirnamePath(path);
      directory !== root && directory !== '/' && !found.has(directory);
      directory = dirnamePath(directory)
    )
      found.add(directory);
  }
  return [...found].sort();
}

async function describeEntry(fs: FileSystem, path: string, maxBytes: number): Promise<string> {
  const stat = await fs.lstat(path);
  if (stat === null) return 'absent';
  const owner = `${stat.mode.toString(8)}:${stat.uid}`;
  switch (stat.kind) {
    case 'symlink':
      return `link:${(await fs.readLink(path)) ?? ''}`;
    case 'file':
      return `file:${owner}:${(await fs.hashFile(path, maxBytes).catch(() => ({ sha256: `size-${stat.size}` }))).sha256}`;
    default:
      return `${stat.kind}:${owner}`;
  }
}
