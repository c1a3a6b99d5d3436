import { failure } from '../../../domain/common/failure.js';
import { FileSystemError } from '../../../domain/common/port-errors.js';
import { isPathInside } from '../../../domain/node/layout/posix-path.js';
import { FILE_ROLES, type SlotLayout } from '../../../domain/node/layout/slot-layout.js';
import type { FileSystem } from '../../../ports/node/file-system.js';
import { raise } from '../../common/failure-signal.js';
import { canonicalPath } from '../layout/observe-layout.js';

/**
 * Refuses (E_USAGE: the argument is what is wrong, the host is not) a `fetch --output` that is
 * or reaches a file the upgrader manages: `fetch` takes no lock and runs no checks, so writing
 * there could replace the active or last-good binary, a link, the record or the state behind
 * the upgrader's back. Compared are real paths: the output with its parent resolved (a `..` or
 * a symlinked directory) and, when the output is itself a link, where it leads; against every
 * layout file (and the daemon's state) by its canonical path and where it leads, and anything in
 * the slot directory.
 */
export async function refuseManagedOutput(fs: FileSystem, layout: SlotLayout, output: string): Promise<void> {
  const managed = new Set<string>();
  for (const role of [...FILE_ROLES, 'daemonState'] as const) {
    for (const path of await realForms(fs, layout[role])) managed.add(path);
  }
  const slotDirectories = await realForms(fs, layout.slotDir);
  for (const path of await realForms(fs, output)) {
    if (managed.has(path) || slotDirectories.some((directory) => isPathInside(directory, path))) {
      raise(failure('E_USAGE', `--output ${output} is a file the upgrader manages (${path}); fetch to another path`));
    }
  }
}

/**
 * The path as given, with its parent resolved, and what it finally names when that exists. A
 * path that cannot be resolved (a file where a directory should be) keeps the forms it has: a
 * broken layout must not stop a fetch to somewhere else.
 */
async function realForms(fs: FileSystem, path: string): Promise<string[]> {
  const forms = [path];
  try {
    forms.push(await canonicalPath(fs, path));
    const resolution = await fs.resolve(path);
    if (resolution.kind === 'resolved') forms.push(resolution.path);
  } catch (error) {
    if (!(error instanceof FileSystemError)) throw error;
  }
  return forms;
}
