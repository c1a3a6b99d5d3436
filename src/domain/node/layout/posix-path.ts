/**
 * POSIX path arithmetic for the pure core. The domain may not import node:path, and it only ever
 * needs absolute, slash-separated host paths.
 */

export function isAbsolutePath(path: string): boolean {
  return path.startsWith('/');
}

/** Collapses `.`, `..`, repeated and trailing slashes. `..` above the root stays at the root. */
export function normalizePath(path: string): string {
  const absolute = isAbsolutePath(path);
  const parts: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
      else if (!absolute) parts.push('..');
      continue;
    }
    parts.push(segment);
  }
  const joined = parts.join('/');
  if (absolute) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/** A clean path is absolute and already in normal form (no `.`, `..`, `//` or trailing slash). */
export function isCleanAbsolutePath(path: string): boolean {
  return isAbsolutePath(path) && !path.includes('\0') && normalizePath(path) === path;
}

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

/** True when `path` is `ancestor` itself or lies below it. */
export function isPathInside(ancestor: string, path: string): boolean {
  const a = normalizePath(ancestor);
  const p = normalizePath(path);
  if (a === '/') return isAbsolutePath(p);
  return p === a || p.startsWith(`${a}/`);
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
