// The example MachineOperations in deploy/examples/ must be accepted by the shipped CRD's schema,
// by kubectl (creating them in the fake API server) and by the daemon as AgentUpgrade requests.

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMachineOperation } from '../../../src/adapters/node/kubernetes/machine-operation.js';
import { FLEX_PROFILE } from '../../../src/app/node/config/profiles.js';
import { parseOptionalSha256 } from '../../../src/domain/common/digest.js';
import { parseDownloadUrl } from '../../../src/domain/common/url-policy.js';
import { loadCrd } from '../../support/kube/crd.js';
import { startFakeApiServer, type JsonObject } from '../../support/kube/fake-apiserver.js';
import { prune, validateObject } from '../../support/kube/schema.js';

const DEPLOY = join(import.meta.dirname, '../../../deploy');
const EXAMPLES = join(DEPLOY, 'examples');
const KUBECTL = '/usr/bin/kubectl';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const crd = loadAll(readFileSync(join(DEPLOY, 'machineoperation-crd.yaml'), 'utf8'))[0] as {
  spec: { group: string; versions: { name: string }[] };
};
const version = crd.spec.versions[0];
if (version === undefined) throw new Error('the CRD serves no version');
const MODEL = loadCrd(join(DEPLOY, 'machineoperation-crd.yaml'));

const isOperation = (doc: unknown): boolean => (doc as { kind?: unknown } | null)?.kind === 'MachineOperation';
/** The example files that hold MachineOperations only (other components ship examples of their own kinds). */
const exampleFiles = readdirSync(EXAMPLES)
  .filter((name) => name.endsWith('.yaml'))
  .filter((name) => loadAll(readFileSync(join(EXAMPLES, name), 'utf8')).every(isOperation))
  .sort();
const examples = exampleFiles.flatMap((name) =>
  loadAll(readFileSync(join(EXAMPLES, name), 'utf8')).map((doc) => ({ name, doc: doc as Json })),
);

/**
 * What a real server refuses in `doc` under strict field validation (kubectl apply's default): the
 * fields the CRD's schema does not declare, and every validation cause (the fake's schema code,
 * which the conformance suite holds to a real kube-apiserver), the "rules not checked" note aside.
 */
function validate(doc: Json): string[] {
  const object = doc as JsonObject;
  const { metadata: _metadata, ...rest } = object; // ObjectMeta is not the schema's to prune
  const pruned: string[] = [];
  prune(rest, MODEL.schema, '', pruned);
  const causes = validateObject(object, MODEL).filter((cause) => cause.field !== '<nil>');
  return [...pruned.map((field) => `${field}: unknown field`), ...causes.map((c) => `${c.field}: ${c.reason}`)];
}

function kubectl(
  origin: string,
  scratch: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      [`--server=${origin}`, `--cache-dir=${join(scratch, 'cache')}`, '--request-timeout=10s', ...args],
      {
        env: { PATH: process.env['PATH'] ?? '', HOME: scratch, KUBECONFIG: join(scratch, 'kubeconfig') },
        timeout: 20_000,
      },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : null, stdout, stderr }),
    );
  });
}

describe('deploy/examples', () => {
  it('holds at least the AgentUpgrade example', () => {
    expect(exampleFiles).toContain('agent-upgrade-operation.yaml');
    expect(examples.length).toBeGreaterThan(0);
  });

  it('rejects what the CRD rejects (the validator itself)', () => {
    const spec = {
      machineRef: 'node-1',
      operationKind: 'AgentUpgrade',
      parameters: { downloadURL: 'https://h/x.tar.gz' },
    };
    const base = { apiVersion: 'unbounded-cloud.io/v1alpha3', kind: 'MachineOperation', metadata: { name: 'x' } };
    expect(validate({ ...base, spec })).toEqual([]);
    expect(validate({ ...base, spec: { ...spec, operationKind: 'Upgrade' } })).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, machineSelector: { matchLabels: {} } } })).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, parameters: { sha256: 5 } } })).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, machineRef: '' } })).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, extra: true } })).toHaveLength(1);
    expect(validate(base)).toHaveLength(1);
  });

  describe.each(examples.map((example, index) => [`${example.name}#${index}`, example.doc] as const))(
    '%s',
    (_name, doc) => {
      it('is a MachineOperation of the served version that the CRD schema accepts', () => {
        expect(doc).toMatchObject({ apiVersion: `${crd.spec.group}/${version.name}`, kind: 'MachineOperation' });
        expect(validate(doc)).toEqual([]);
      });

      it('is an AgentUpgrade for one machine with parameters the daemon accepts', () => {
        const view = readMachineOperation({
          ...(doc as object),
          metadata: { ...(doc as { metadata: object }).metadata, uid: 'u', resourceVersion: '1' },
        });
        expect(view?.operationKind).toBe('AgentUpgrade');
        expect(view?.target.kind).toBe('machine-ref');
        const parameters = view?.parameters ?? {};
        const digest = parseOptionalSha256(parameters['sha256']);
        expect(digest.ok).toBe(true);
        expect(
          parseDownloadUrl(parameters['downloadURL'] ?? '', FLEX_PROFILE.artifact, digest.ok && digest.value !== null)
            .ok,
        ).toBe(true);
      });
    },
  );

  describe('created with kubectl in the fake API server', () => {
    let scratch: string;
    beforeAll(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'deploy-examples-'));
    });
    afterAll(async () => {
      await rm(scratch, { recursive: true, force: true });
    });

    it('arrives as the same operation', async () => {
      const server = await startFakeApiServer();
      try {
        // The fake serves no OpenAPI document, so kubectl's own validation is off; the schema
        // is checked above.
        const files = exampleFiles.flatMap((name) => ['-f', join(EXAMPLES, name)]);
        const run = await kubectl(server.origin, scratch, ['create', '--validate=false', ...files, '-o', 'name']);
        expect(run.code, run.stderr).toBe(0);
        const names = examples.map(({ doc }) => (doc as { metadata: { name: string } }).metadata.name);
        expect(run.stdout.trim().split('\n').sort()).toEqual(
          names.map((name) => `machineoperation.unbounded-cloud.io/${name}`).sort(),
        );
        for (const { doc } of examples) {
          const stored = server.get((doc as { metadata: { name: string } }).metadata.name);
          expect(stored?.spec).toEqual((doc as { spec: object }).spec);
        }
      } finally {
        await server.close();
      }
    });
  });
});
