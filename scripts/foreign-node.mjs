// Node binaries from the npm registry's node-linux-<arch> packages, fetched once into a cache
// outside the repository and accepted only when their integrity equals a pinned one:
//  - foreignNode(repo, arch): this same Node release for another architecture, for the single
//    executable (build-sea.mjs --arch); package-lock.json pins it (tools/node-runtime);
//  - registryNode(pin): another Node line on this machine (scripts/other-runtimes.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const NPM_ARCH = { amd64: 'x64', arm64: 'arm64' };

export function foreignNode(repo, arch) {
  const name = `node-linux-${NPM_ARCH[arch]}`;
  const version = process.versions.node;
  const pinned = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8')).packages[`node_modules/${name}`];
  if (pinned?.version !== version)
    throw new Error(`package-lock.json pins ${name}@${pinned?.version ?? 'nothing'}, but this is Node ${version}`);
  return registryNode({ name, version, integrity: pinned.integrity });
}

/** The `node` binary of `name@version`, whose registry tarball must have `integrity`. */
export function registryNode({ name, version, integrity }) {
  const cacheRoot = process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache');
  const dir = join(cacheRoot, 'agent-upgrade', 'node-runtime', `${name}-${version}`);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  const work = `${dir}.work-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const packed = JSON.parse(
    execFileSync('npm', ['pack', `${name}@${version}`, '--json', '--pack-destination', work], { encoding: 'utf8' }),
  )[0];
  if (packed.integrity !== integrity)
    throw new Error(
      `${name}@${version} from the registry has integrity ${packed.integrity}, not the pinned ${integrity}`,
    );
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work, 'package/bin/node']);
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return binary;
}
