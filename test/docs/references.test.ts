/**
 * Everything the repository refers to must be in the repository: no pointers to files a clone
 * does not have, every relative markdown link and every `docs/…md#anchor` mention resolves to a
 * file and an anchor, every mentioned markdown file exists, and every rule label the code cites
 * (S1–S8, R1–R3, I1–I12, rows 1–8) is defined in docs/protocol.md.
 *
 * The patterns are assembled from parts so that this file does not match them itself.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const ROOTS = ['README.md', 'docs', 'src', 'test', 'bench', 'scripts', 'deploy', 'examples', '.ci'];
const PROTOCOL = 'docs/protocol.md';

/** Every text file under the roots (checksum files aside), as repository-relative paths. */
function textFiles(): string[] {
  const out: string[] = [];
  const walk = (path: string): void => {
    const stat = statSync(join(REPO, path), { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isDirectory()) {
      for (const name of readdirSync(join(REPO, path)).sort()) if (name !== 'node_modules') walk(`${path}/${name}`);
      return;
    }
    // go.sum holds checksums, not prose: a base64 run may spell a label by chance.
    if (stat.isFile() && !path.endsWith('/go.sum') && !readFileSync(join(REPO, path)).includes(0)) out.push(path);
  };
  for (const root of ROOTS) walk(root);
  return out;
}

const FILES = textFiles();
const text = new Map(FILES.map((file) => [file, readFileSync(join(REPO, file), 'utf8')]));
const read = (file: string): string => text.get(file) ?? readFileSync(join(REPO, file), 'utf8');
const lineOf = (source: string, index: number): number => source.slice(0, index).split('\n').length;

/** Fenced code blocks hold examples, not links. */
const withoutFences = (markdown: string): string =>
  markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '));

/** GitHub's heading slug: lower case, punctuation dropped (letters, digits, `_`, `-` kept), spaces to hyphens. */
function githubSlug(heading: string): string {
  return heading
    .replace(/\s*\{#[\w-]+\}\s*$/, '')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown file: heading slugs (with GitHub's -1, -2 for repeats) and explicit ids. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const body = withoutFences(markdown);
  for (const match of body.matchAll(/^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$/gm)) {
    const base = githubSlug(match[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of body.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(match[1] ?? '');
  for (const match of body.matchAll(/\{#([\w-]+)\}/g)) anchors.add(match[1] ?? '');
  return anchors;
}

const anchorCache = new Map<string, Set<string>>();
function anchorsIn(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors === undefined) {
    anchors = anchorsOf(read(file));
    anchorCache.set(file, anchors);
  }
  return anchors;
}

const exists = (file: string): boolean => statSync(join(REPO, file), { throwIfNoEntry: false }) !== undefined;

/** `null` when `target` (repository-relative, optionally `#anchor`) resolves, otherwise why not. */
function unresolved(file: string, anchor: string | undefined): string | null {
  if (!exists(file)) return `${file} does not exist`;
  if (anchor === undefined || anchor === '') return null;
  if (!file.endsWith('.md')) return `${file}#${anchor}: anchors are checked in markdown only`;
  return anchorsIn(file).has(anchor) ? null : `${file} has no anchor #${anchor}`;
}

const FORBIDDEN: readonly { readonly what: string; readonly pattern: RegExp }[] = [
  { what: 'the shared directory outside the repository', pattern: new RegExp(['\\.\\.', 'shared'].join('/')) },
  { what: 'the external specification', pattern: new RegExp(['SPEC', 'md'].join('\\.')) },
  { what: 'a specification section', pattern: new RegExp(['SPEC', '§'].join('\\s*')) },
  { what: 'the external protocol notes', pattern: new RegExp(['notes', 'protocol\\.md'].join('/')) },
  { what: 'an external reference file', pattern: new RegExp(`(^|[^\\w/-])${'refer' + 'ence'}/[\\w.-]+\\.md`) },
  { what: 'an issue number', pattern: new RegExp(`\\b${'iss' + 'ue'}\\s+#?\\d+`, 'i') },
];

interface Finding {
  readonly at: string;
  readonly problem: string;
}

function scan(files: readonly string[], find: (file: string, source: string) => Finding[]): string[] {
  return files.flatMap((file) => find(file, read(file))).map(({ at, problem }) => `${at}: ${problem}`);
}

describe('references', () => {
  it('finds the files it is meant to check', () => {
    for (const expected of [
      'README.md',
      PROTOCOL,
      'docs/configuration.md',
      'src/domain/node/recovery/recovery-vocabulary.ts',
      'deploy/machineoperation-crd.yaml',
      '.ci/run',
    ]) {
      expect(FILES).toContain(expected);
    }
  });

  it('never point outside the repository', () => {
    const found = scan(FILES, (file, source) =>
      FORBIDDEN.flatMap(({ what, pattern }) =>
        [...source.matchAll(new RegExp(pattern.source, `${pattern.flags.replace('g', '')}g`))].map((match) => ({
          at: `${file}:${lineOf(source, match.index)}`,
          problem: `${what} (${match[0].trim()})`,
        })),
      ),
    );
    expect(found).toEqual([]);
  });

  it('resolve every relative markdown link to a file and an anchor', () => {
    const markdown = FILES.filter((file) => file.endsWith('.md'));
    const found = scan(markdown, (file, source) => {
      const body = withoutFences(source).replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
      return [...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].flatMap((match) => {
        const target = match[1] ?? '';
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return [];
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? file : relative(REPO, resolve(REPO, dirname(file), decodeURIComponent(path)));
        const problem = unresolved(resolved, anchor);
        return problem === null
          ? []
          : [{ at: `${file}:${lineOf(source, match.index)}`, problem: `[${target}] ${problem}` }];
      });
    });
    expect(found).toEqual([]);
  });

  it('resolve every docs/<file>.md#anchor mention, in markdown and in code', () => {
    const found = scan(FILES, (file, source) =>
      [...source.matchAll(/(?<![\w/.-])docs\/([\w.-]+\.md)(?:#([\w-]+))?/g)].flatMap((match) => {
        const problem = unresolved(`docs/${match[1] ?? ''}`, match[2]);
        return problem === null ? [] : [{ at: `${file}:${lineOf(source, match.index)}`, problem }];
      }),
    );
    expect(found).toEqual([]);
  });

  it('mention only markdown files the repository has', () => {
    const found = scan(FILES, (file, source) =>
      [...source.matchAll(/(?<![\w/.@-])((?:\.\.?\/)*(?:[\w.-]+\/)*[\w-][\w.-]*\.md)\b/g)].flatMap((match) => {
        const mention = match[1] ?? '';
        const candidates = [mention, relative(REPO, resolve(REPO, dirname(file), mention))];
        return candidates.some(exists)
          ? []
          : [{ at: `${file}:${lineOf(source, match.index)}`, problem: `${mention} is not a file of the repository` }];
      }),
    );
    expect(found).toEqual([]);
  });

  it('define every rule label the code cites in docs/protocol.md', () => {
    const anchors = anchorsIn(PROTOCOL);
    const code = FILES.filter((file) => /^(src|test|bench|scripts)\//.test(file));
    const found = scan(code, (file, source) => {
      const labels = [...source.matchAll(/\b([ISR])(\d{1,2})\b/g)].map((match) => ({
        index: match.index,
        anchor: `${(match[1] ?? '').toLowerCase()}${match[2] ?? ''}`,
      }));
      const rows = [...source.matchAll(/\b[Rr]ows? (\d+)(?:[–-](\d+))?\b/g)].flatMap((match) => {
        const first = Number(match[1]);
        const last = match[2] === undefined ? first : Number(match[2]);
        return Array.from({ length: Math.max(1, last - first + 1) }, (_, offset) => ({
          index: match.index,
          anchor: `row-${first + offset}`,
        }));
      });
      return [...labels, ...rows]
        .filter(({ anchor }) => !anchors.has(anchor))
        .map(({ index, anchor }) => ({
          at: `${file}:${lineOf(source, index)}`,
          problem: `${PROTOCOL} has no #${anchor}`,
        }));
    });
    expect(found).toEqual([]);
  });

  it('define the rule names recovery/vocabulary.ts declares', () => {
    const policy = read('src/domain/node/recovery/recovery-vocabulary.ts');
    const union = (name: string): string[] => {
      const declaration = new RegExp(`export type ${name} = ([^;]+);`).exec(policy)?.[1] ?? '';
      return [...declaration.matchAll(/'([\w-]+)'/g)].map((match) => (match[1] ?? '').toLowerCase());
    };
    const names = [...union('StartupRule'), ...union('RecoverRule')];
    expect(names).toEqual(expect.arrayContaining(['s1', 's8', 'own-record', 'r1', 'r3']));
    expect(names.filter((name) => !anchorsIn(PROTOCOL).has(name))).toEqual([]);
  });

  it('compute anchors the way GitHub does', () => {
    expect(githubSlug('Startup gate (S1–S8)')).toBe('startup-gate-s1s8');
    expect(githubSlug('The simulation suite (`test/sim`, part of `npm test`)')).toBe(
      'the-simulation-suite-testsim-part-of-npm-test',
    );
    expect(githubSlug('supervisor (hosts without systemd)')).toBe('supervisor-hosts-without-systemd');
    expect(githubSlug("TUF's attack list, mapped")).toBe('tufs-attack-list-mapped');
    expect([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n<a id="x"></a>\n### B {#y}\n')]).toEqual([
      'a',
      'a-1',
      'b',
      'x',
      'y',
    ]);
  });
});
