// Helpers for test/package: a copy of the working tree without build output, bounded child
// processes with a clean npm environment, and static facts about a package directory.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '../..');

export interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The environment for npm and the CLI: without the npm_* variables of an enclosing `npm run`
 * (its prefix, package and lifecycle would leak into the nested npm), keeping the cache, the
 * registry and the user config, with this Node first on PATH for the CLI's shebang.
 */
export function childEnv(): NodeJS.ProcessEnv {
  const keep = new Set(['npm_config_cache', 'npm_config_registry', 'npm_config_userconfig']);
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || keep.has(key.toLowerCase())),
  );
  delete env['INIT_CWD'];
  return {
    ...env,
    PATH: [dirname(process.execPath), process.env['PATH'] ?? ''].join(delimiter),
    NO_UPDATE_NOTIFIER: '1',
  };
}

/** Runs a command to completion or `timeoutMs`; a command killed by the timeout has status null. */
export function run(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly timeoutMs: number },
): Run {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: childEnv(),
    encoding: 'utf8',
    timeout: options.timeoutMs,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** A run that must succeed; its output is in the error otherwise. */
export function runOk(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly timeoutMs: number },
): Run {
  const result = run(command, args, options);
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status}\n${result.stdout.slice(-4000)}\n${result.stderr.slice(-4000)}`,
    );
  }
  return result;
}

/** `runOk` without blocking, so independent runs can overlap. */
export function runOkAsync(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly timeoutMs: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => void (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => {
      if (status === 0) resolve({ status, stdout, stderr });
      else
        reject(
          new Error(`${command} ${args.join(' ')} exited ${status}\n${stdout.slice(-4000)}\n${stderr.slice(-4000)}`),
        );
    });
  });
}

/**
 * Copies the files git tracks or would track (committed, modified and untracked, not ignored)
 * into `destination`: the working tree as a fresh checkout would have it, with uncommitted work
 * but without dist/ or node_modules/. The repository's node_modules is linked in, so the
 * copy can build without an install.
 */
export function copyWorkingTree(destination: string): void {
  const listed = runOk('git', ['-C', REPO, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    timeoutMs: 30_000,
  });
  for (const path of new Set(listed.stdout.split('\0'))) {
    if (path === '' || /^(node_modules|dist)(\/|$)/.test(path)) continue;
    const source = join(REPO, path);
    if (!existsSync(source) && !isSymlink(source)) continue; // deleted in the working tree
    mkdirSync(dirname(join(destination, path)), { recursive: true });
    cpSync(source, join(destination, path), { verbatimSymlinks: true, preserveTimestamps: true });
  }
  symlinkSync(join(REPO, 'node_modules'), join(destination, 'node_modules'));
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Every file under `directory`, as paths relative to it with `/` separators, sorted. */
export function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => !entry.isDirectory())
    .map((entry) => join(entry.parentPath, entry.name).slice(directory.length + 1))
    .sort();
}

const STATIC_IMPORT = /^\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
const PACKAGE_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/** The packages (not builtins, not relative paths) the given JavaScript files import, sorted. */
export function importedPackages(files: readonly string[]): string[] {
  const names = new Set<string>();
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    for (const match of [...text.matchAll(STATIC_IMPORT), ...text.matchAll(DYNAMIC_IMPORT)]) {
      const specifier = match[1] ?? match[2] ?? '';
      if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier)) continue;
      const name = specifier
        .split('/')
        .slice(0, specifier.startsWith('@') ? 2 : 1)
        .join('/');
      if (PACKAGE_NAME.test(name)) names.add(name);
    }
  }
  return [...names].sort();
}
