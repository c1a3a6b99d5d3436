/**
 * Clean absolute POSIX paths, for both contexts: the node's layout arithmetic
 * (src/domain/node/layout/posix-path.ts) and the paths a configuration names. The domain may not
 * import node:path, and it only ever needs absolute, slash-separated host paths.
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

/** True when `path` is `ancestor` itself or lies below it. */
export function isPathInside(ancestor: string, path: string): boolean {
  const a = normalizePath(ancestor);
  const p = normalizePath(path);
  if (a === '/') return isAbsolutePath(p);
  return p === a || p.startsWith(`${a}/`);
}
