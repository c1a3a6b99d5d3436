#!/usr/bin/env node
// npm run build:sea — one self-contained executable (Node single executable application):
//   1. tsc output (npm run build) bundled by esbuild into one CommonJS file (no top-level await);
//   2. a SEA blob with V8's code cache; 3. a copy of this node binary, stripped, with the blob
//   injected by postject.
// Options: --output PATH (default build/agent-upgrade), --version X.Y.Z (overrides the version
// the binary reports; tests build several releases this way), --arch amd64|arm64 (default: this
// machine's). Another architecture's binary is the same Node release for that machine, fetched
// from the npm registry and checked against the integrity package-lock.json pins
// (scripts/foreign-node.mjs); its blob carries no V8 code cache, which only this machine's V8 reads.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { foreignNode } from './foreign-node.mjs';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1] : fallback;
};
const output = resolve(option('--output', join(repo, 'build', 'agent-upgrade')));
const version = option('--version', null);
const hostArch = process.arch === 'arm64' ? 'arm64' : 'amd64';
const arch = option('--arch', hostArch);
if (arch !== 'amd64' && arch !== 'arm64') {
  console.error('--arch takes amd64 or arm64');
  process.exit(2);
}
const nodeBinary = arch === hostArch ? process.execPath : foreignNode(repo, arch);
const work = `${output}.work`;
rmSync(work, { recursive: true, force: true });
mkdirSync(work, { recursive: true });

const entry = join(work, 'entry.mjs');
writeFileSync(
  entry,
  `import { main } from ${JSON.stringify(join(repo, 'dist/app/main/main.js'))};\nmain(process.argv.slice(2)).then((code) => { process.exitCode = code; });\n`,
);
const emptyModule = join(work, 'empty.cjs');
writeFileSync(emptyModule, 'module.exports = {};\n');

await build({
  entryPoints: [entry],
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  outfile: join(work, 'bundle.cjs'),
  logLevel: 'warning',
  // ws's optional native helpers and node-fetch's optional `encoding` cannot be required in a SEA.
  define: { 'process.env.WS_NO_BUFFER_UTIL': '"1"', 'process.env.WS_NO_UTF_8_VALIDATE': '"1"' },
  alias: { encoding: emptyModule },
  plugins:
    version === null
      ? []
      : [
          {
            name: 'version-override',
            setup(context) {
              context.onLoad({ filter: /dist[\\/]package-version\.js$/ }, () => ({
                contents: `export const AGENT_UPGRADE_VERSION = ${JSON.stringify(version)};\n`,
                loader: 'js',
              }));
            },
          },
        ],
});

const seaConfig = join(work, 'sea-config.json');
writeFileSync(
  seaConfig,
  JSON.stringify({
    main: join(work, 'bundle.cjs'),
    output: join(work, 'sea-prep.blob'),
    disableExperimentalSEAWarning: true,
    useCodeCache: arch === hostArch,
  }),
);
execFileSync(process.execPath, ['--experimental-sea-config', seaConfig], { stdio: 'pipe' });
mkdirSync(dirname(output), { recursive: true });
copyFileSync(nodeBinary, `${output}.tmp`);
chmodSync(`${output}.tmp`, 0o755);
try {
  execFileSync('strip', [`${output}.tmp`], { stdio: 'ignore' });
} catch {
  // strip is optional: the binary is only larger without it.
}
execFileSync(
  process.execPath,
  [
    join(repo, 'node_modules/postject/dist/cli.js'),
    `${output}.tmp`,
    'NODE_SEA_BLOB',
    join(work, 'sea-prep.blob'),
    '--sentinel-fuse',
    'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
  ],
  { stdio: 'ignore' },
);
execFileSync('mv', ['-f', `${output}.tmp`, output]);
rmSync(work, { recursive: true, force: true });
console.log(`built ${output} (${arch}, Node ${process.version}${version === null ? '' : `, version ${version}`})`);
