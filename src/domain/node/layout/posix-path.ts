/**
 * POSIX path arithmetic for the pure core. The domain may not import node:path, and it only ever
 * needs absolute, slash-separated host paths.
 */

import { isAbsolutePath, normalizePath } from '../../common/clean-path.js';

// Shared with the fleet (its configuration's paths); re-exported so the node's imports stay put.
export { isAbsolutePath, isCleanAbsolutePath, isPathInside, normalizePath } from '../../common/clean-path.js';

export function joinPath(...parts: readonly string[]): string {
  return normalizePath(parts.filter((part) => part !== '').join('/'));
}

export function dirnamePath(path: string): string {
  const normal = normalizePath(path);
  if (normal === '/') return '/';
  const index = normal.lastIndexOf('/');
  if (index < 0) return '.';
  return index === 0 ? '/' : normal.slice(0, index);
}

export function basenamePath(path: string): string {
  const normal = normalizePath(path);
  if (normal === '/') return '/';
  return normal.slice(normal.lastIndexOf('/') + 1);
}

/** The relative path that leads from directory `from` to `to`; both absolute. */
export function relativePath(from: string, to: string): string {
  const fromParts = splitAbsolute(from);
  const toParts = splitAbsolute(to);
  let common = 0;
  while (common < fromParts.length && common < toParts.length && fromParts[common] === toParts[common]) {
    common += 1;
  }
  const ups = fromParts.slice(common).map(() => '..');
  const relative = [...ups, ...toParts.slice(common)].join('/');
  return relative === '' ? '.' : relative;
}

/** Resolves a link's stored target text against the directory holding the link. */
export function resolveLinkTarget(linkPath: string, target: string): string {
  return isAbsolutePath(target) ? normalizePath(target) : joinPath(dirnamePath(linkPath), target);
}

/**
 * Places a host path under `root` (`/` leaves it unchanged). The path is taken as absolute and
 * normalised first, so `..` segments stop at the host root and can never climb out of `root`.
 */
export function rerootPath(root: string, path: string): string {
  const hostPath = normalizePath(`/${path}`);
  return normalizePath(root) === '/' ? hostPath : joinPath(root, hostPath);
}

function splitAbsolute(path: string): string[] {
  return normalizePath(path)
    .split('/')
    .filter((segment) => segment !== '');
}
