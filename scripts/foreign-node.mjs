// The Node binary of this same release for another Linux architecture, for the single executable
// (build-sea.mjs --arch): the registry's node-linux-<arch> package at this process's version,
// fetched once into a cache outside the repository and accepted only when its integrity equals
// the one package-lock.json pins (tools/node-runtime lists both architectures).
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
  if (packed.integrity !== pinned.integrity)
    throw new Error(
      `${name}@${version} from the registry has integrity ${packed.integrity}, not the pinned ${pinned.integrity}`,
    );
  execFileSync('tar', ['-xzf', join(work, packed.filename), '-C', work, 'package/bin/node']);
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return binary;
}
