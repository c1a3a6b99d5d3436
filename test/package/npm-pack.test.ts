// The published artifact: `npm pack` of the working tree with the dist/ that `npm run build` made
// (prepack runs that same build on a tree without one; `npm run check` has just run it, and a second
// build here cost a fifth of this file's CPU), what the tarball holds, and the tarball installed
// globally (without the optional memfs) and into a project (with it), where the CLI, the embedding
// example and `agent-upgrade/testing` run from the installed files only.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copyExample, EXAMPLE_FILES } from '../support/embedding-example.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDemo, expectExample, expectVersion, RUN_TIMEOUT_MS } from './installed-package-checks.js';
import { copyWorkingTree, filesUnder, importedPackages, REPO, run, runOk, runOkAsync } from './package-harness.js';
import { assertBuildCurrent } from '../support/systemd/systemd-host.js';

interface Manifest {
  readonly version: string;
  readonly main: string;
  readonly types: string;
  readonly bin: Readonly<Record<string, string>>;
  readonly exports: Readonly<Record<string, { readonly types: string; readonly default: string }>>;
  readonly dependencies: Readonly<Record<string, string>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly peerDependenciesMeta?: Readonly<Record<string, { readonly optional?: boolean }>>;
  readonly devDependencies: Readonly<Record<string, string>>;
  readonly scripts: Readonly<Record<string, string>>;
}

const NPM_TIMEOUT_MS = 120_000;
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

const work = mkdtempSync(join(tmpdir(), 'agent-upgrade-pack-'));
let tarball = '';
let unpacked = '';
let manifest: Manifest;
const prefix = join(work, 'global');
const project = join(work, 'project');

beforeAll(async () => {
  const tree = join(work, 'tree');
  copyWorkingTree(tree);
  if (existsSync(join(tree, 'dist'))) throw new Error('the copied tree already has dist/');
  assertBuildCurrent();
  cpSync(join(REPO, 'dist'), join(tree, 'dist'), { recursive: true });
  mkdirSync(join(work, 'out'));
  runOk('npm', ['pack', '--ignore-scripts', '--pack-destination', join(work, 'out'), '--loglevel=error'], {
    cwd: tree,
    timeoutMs: NPM_TIMEOUT_MS,
  });
  const [name, ...others] = readdirSync(join(work, 'out'));
  if (name === undefined || others.length > 0) throw new Error(`npm pack wrote ${[name, ...others].join(', ')}`);
  tarball = join(work, 'out', name);
  mkdirSync(join(work, 'unpacked'));
  runOk('tar', ['-xzf', tarball, '-C', join(work, 'unpacked')], { cwd: work, timeoutMs: 30_000 });
  unpacked = join(work, 'unpacked', 'package');
  manifest = JSON.parse(readFileSync(join(unpacked, 'package.json'), 'utf8')) as Manifest;
  // The two installs are independent: overlapped, they cost about one.
  mkdirSync(project);
  writeFileSync(
    join(project, 'package.json'),
    `${JSON.stringify({ name: 'embedder', version: '1.0.0', private: true, type: 'module' })}\n`,
  );
  const memfs = `memfs@${manifest.devDependencies['memfs'] ?? 'missing'}`;
  await Promise.all([
    runOkAsync('npm', ['install', '--global', '--prefix', prefix, tarball, ...INSTALL_FLAGS], {
      cwd: work,
      timeoutMs: NPM_TIMEOUT_MS,
    }),
    runOkAsync('npm', ['install', tarball, memfs, ...INSTALL_FLAGS], { cwd: project, timeoutMs: NPM_TIMEOUT_MS }),
  ]);
}, 300_000);

// An installed package tree is thousands of files: removing it takes longer than a hook's default bound on a busy disk.
afterAll(() => rmSync(work, { recursive: true, force: true }), 120_000);

describe('npm pack', () => {
  it('builds dist/ in prepack and ships only the runtime files, the sources and the licence', () => {
    expect(manifest.scripts['prepack']).toBe('npm run build');
    expect(manifest.scripts['build']?.startsWith('rm -rf dist && ')).toBe(true);
    const files = filesUnder(unpacked);
    expect(tarball.endsWith(`agent-upgrade-${manifest.version}.tgz`)).toBe(true);
    expect([...new Set(files.map((file) => file.split('/')[0]))].sort()).toEqual([
      'LICENSE',
      'README.md',
      'bin',
      'dist',
      'man',
      'package.json',
      'src',
    ]);
    expect(files.filter((file) => /(^|\/)(test|tests|__tests__)\/|\.test\.[cm]?[jt]s$/.test(file))).toEqual([]);
    const entryPoints = [
      manifest.main,
      manifest.types,
      ...Object.values(manifest.bin),
      ...Object.values(manifest.exports).flatMap((entry) => [entry.types, entry.default]),
    ];
    expect(entryPoints.filter((path) => !files.includes(path.replace(/^\.\//, '')))).toEqual([]);
    expect(readFileSync(join(unpacked, 'LICENSE'))).toEqual(readFileSync(join(REPO, 'LICENSE')));
    // Every shipped source has its four outputs.
    const sources = files.filter((file) => file.startsWith('src/') && file.endsWith('.ts'));
    const outputs = sources.flatMap((file) =>
      ['.js', '.js.map', '.d.ts', '.d.ts.map'].map((ext) => file.replace(/^src\//, 'dist/').replace(/\.ts$/, ext)),
    );
    expect(outputs.filter((file) => !files.includes(file))).toEqual([]);
    expect(sources.length).toBeGreaterThan(0);
    // ... and every shipped output has its source: nothing left from a source since removed.
    const orphans = files.filter(
      (file) =>
        /^dist\/.*\.(js|d\.ts)$/.test(file) &&
        !files.includes(file.replace(/^dist\//, 'src/').replace(/(\.d)?\.ts$|\.js$/, '.ts')),
    );
    expect(orphans).toEqual([]);
  });

  it('declares as runtime or optional peer dependencies exactly the packages its code imports', () => {
    const code = filesUnder(unpacked).filter((file) => file.startsWith('bin/') || /^dist\/.*\.js$/.test(file));
    const peers = manifest.peerDependencies ?? {};
    expect(importedPackages(code.map((file) => join(unpacked, file)))).toEqual(
      [...Object.keys(manifest.dependencies), ...Object.keys(peers)].sort(),
    );
    // A peer is only for agent-upgrade/testing, so it is optional and also a dev dependency here.
    expect(
      Object.keys(peers).filter(
        (name) =>
          manifest.peerDependenciesMeta?.[name]?.optional !== true || manifest.devDependencies[name] === undefined,
      ),
    ).toEqual([]);
  });

  it('ships source maps and declaration maps whose every source is in the package', () => {
    const maps = filesUnder(unpacked).filter((file) => file.endsWith('.map'));
    const missing = maps.flatMap((map) => {
      const { sources } = JSON.parse(readFileSync(join(unpacked, map), 'utf8')) as { sources: string[] };
      return sources.map((source) => join(unpacked, map, '..', source)).filter((path) => !existsSync(path));
    });
    expect(maps.length).toBeGreaterThan(0);
    expect(missing).toEqual([]);
  });
});

describe('installed globally into a prefix (no memfs)', () => {
  const bin = join(prefix, 'bin', 'agent-upgrade');
  const packageDir = join(prefix, 'lib', 'node_modules', 'agent-upgrade');

  it('runs `version`', () => expectVersion(bin, work, manifest.version));

  it('runs `demo`: migrate, upgrade, automatic rollback, nothing left behind', () => expectDemo(bin, work), 90_000);

  it(
    'runs the embedding example, while agent-upgrade/testing needs the optional memfs',
    () => {
      // A script under <prefix>/lib resolves bare specifiers from <prefix>/lib/node_modules.
      const scripts = join(prefix, 'lib', 'embedder');
      mkdirSync(scripts);
      expectExample(scripts);
      writeFileSync(
        join(scripts, 'testing.mjs'),
        "await import('agent-upgrade/testing').then(() => console.log('null'), (error) => console.log(JSON.stringify(error.code)));\n",
      );
      const probe = run(process.execPath, ['testing.mjs'], { cwd: scripts, timeoutMs: RUN_TIMEOUT_MS });
      expect({ status: probe.status, code: JSON.parse(probe.stdout) as unknown }).toEqual({
        status: 0,
        code: 'ERR_MODULE_NOT_FOUND',
      });
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it(
    'resolves the Watch module by the deep path the Kubernetes adapter imports',
    () => {
      const probe = run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "const m = await import('@kubernetes/client-node/dist/watch.js'); console.log(JSON.stringify(typeof m.Watch));",
        ],
        {
          cwd: packageDir,
          timeoutMs: RUN_TIMEOUT_MS,
        },
      );
      expect({ status: probe.status, type: probe.stdout.trim() }).toEqual({ status: 0, type: '"function"' });
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});

describe('installed into a project with memfs', () => {
  const bin = join(project, 'node_modules', '.bin', 'agent-upgrade');

  // The demo ran from the global install above; the same files, so it is not run twice.
  it('runs `version`', () => expectVersion(bin, work, manifest.version));

  it(
    "runs the embedding example and agent-upgrade/testing's memory file system",
    () => {
      expectExample(project);
      writeFileSync(
        join(project, 'testing.mjs'),
        [
          "import * as testing from 'agent-upgrade/testing';",
          'const fs = testing.MemoryFileSystem.fromTree({});',
          "await fs.writeFileAtomic('/probe', new Uint8Array([1, 2, 3]), { mode: 0o644 });",
          "console.log(JSON.stringify({ exports: Object.keys(testing).sort(), read: [...(await fs.readFile('/probe', 16))] }));",
        ].join('\n'),
      );
      const probe = run(process.execPath, ['testing.mjs'], { cwd: project, timeoutMs: RUN_TIMEOUT_MS });
      expect(probe.status).toBe(0);
      const answer = JSON.parse(probe.stdout) as { exports: string[]; read: number[] };
      expect(answer.read).toEqual([1, 2, 3]);
      expect(answer.exports).toEqual(
        expect.arrayContaining([
          'MemoryClock',
          'MemoryFileSystem',
          'MemoryOperationStore',
          'MemoryServiceManager',
          'NoServiceManager',
        ]),
      );
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it(
    'type-checks a consumer of both entry points against the shipped declarations (no skipLibCheck)',
    () => {
      writeFileSync(
        join(project, 'consumer.ts'),
        [
          "import { createUpgrader, FLEX_PROFILE } from 'agent-upgrade';",
          "import { MemoryFileSystem } from 'agent-upgrade/testing';",
          'const fs: MemoryFileSystem = MemoryFileSystem.fromTree({});',
          'export const used = [createUpgrader, FLEX_PROFILE, fs];',
        ].join('\n'),
      );
      // The embedding example too, as an embedder would compile it.
      copyExample(project);
      const tsc = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
      const flags = [
        '--noEmit',
        '--strict',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--allowImportingTsExtensions',
      ];
      const check = run(
        process.execPath,
        [
          tsc,
          ...flags,
          '--typeRoots',
          join(REPO, 'node_modules', '@types'),
          '--types',
          'node',
          'consumer.ts',
          ...EXAMPLE_FILES,
        ],
        { cwd: project, timeoutMs: RUN_TIMEOUT_MS },
      );
      expect({ status: check.status, stdout: check.stdout }).toEqual({ status: 0, stdout: '' });
    },
    RUN_TIMEOUT_MS + 10_000,
  );
});
