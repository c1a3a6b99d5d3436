// deploy/image/Dockerfile, read rather than built: this machine has no container engine (docker's
// client only, no daemon, no podman or buildah) and reaches no image registry for the base, so the
// suite cannot build or run the image (docs/rollouts.md#with-helm says so). What it can hold is
// the recipe against the chart and the docs: the entry point, the user, and the name users are
// told to build, which must be the image the chart runs by default.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';

const REPO = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(join(REPO, 'deploy/image/Dockerfile'), 'utf8');
const instructions = dockerfile
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'))
  .map((line) => {
    const [keyword = '', ...rest] = line.trim().split(/\s+/);
    return { keyword: keyword.toUpperCase(), value: rest.join(' ') };
  });
const valuesOf = (keyword: string): string[] =>
  instructions.filter((instruction) => instruction.keyword === keyword).map((instruction) => instruction.value);

const chart = load(readFileSync(join(REPO, 'deploy/chart/Chart.yaml'), 'utf8')) as { appVersion: string };
const values = load(readFileSync(join(REPO, 'deploy/chart/values.yaml'), 'utf8')) as {
  image: { repository: string; tag: string };
  podSecurityContext: { runAsUser: number; runAsNonRoot: boolean };
};

/** `docker build … -t REPOSITORY:TAG CONTEXT` commands in a text, each with its image and context. */
function buildCommands(text: string): { repository: string; tag: string; context: string }[] {
  return [...text.matchAll(/docker build -f deploy\/image\/Dockerfile -t ([^\s:]+):(\S+) (\S+)/g)].map((match) => ({
    repository: match[1] ?? '',
    tag: match[2] ?? '',
    context: match[3] ?? '',
  }));
}

describe('deploy/image/Dockerfile', () => {
  it('runs agent-upgrade controller, in exec form, from a glibc base', () => {
    expect(valuesOf('ENTRYPOINT').map((value) => JSON.parse(value) as unknown)).toEqual([
      ['/usr/local/bin/agent-upgrade', 'controller'],
    ]);
    // The single executable is Node's binary, linked against glibc and libstdc++: distroless/cc has them.
    expect(valuesOf('FROM')).toEqual(['gcr.io/distroless/cc-debian12']);
    expect(valuesOf('COPY')).toEqual(['--chmod=0755 agent-upgrade /usr/local/bin/agent-upgrade']);
  });

  it("runs as a numeric non-root user, the one the chart's pods run as", () => {
    const users = valuesOf('USER');
    expect(users).toHaveLength(1);
    const [uid, gid] = (users[0] ?? '').split(':').map(Number);
    expect(uid).toBe(values.podSecurityContext.runAsUser);
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
    expect(values.podSecurityContext.runAsNonRoot).toBe(true);
  });

  it('is built under the name the chart runs by default, as the docs and the recipe tell', () => {
    const told = [...buildCommands(readFileSync(join(REPO, 'docs/rollouts.md'), 'utf8')), ...buildCommands(dockerfile)];
    expect(told.length).toBeGreaterThanOrEqual(2);
    const expected = { repository: values.image.repository, tag: chart.appVersion, context: 'build/' };
    for (const command of told) expect(command).toEqual(expected);
    // An empty tag in the values means the appVersion the docs build.
    expect(values.image.tag).toBe('');
  });
});
