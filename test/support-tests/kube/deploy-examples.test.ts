// The example operations in deploy/examples/ must be accepted by the shipped CRD's schema, by
// kubectl (creating them in the fake API server) and by the daemon as AgentUpgrade requests.

import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAll } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMachineOperation } from '../../../src/adapters/kubernetes/machine-operation.js';
import { FLEX_PROFILE } from '../../../src/app/config/upgrader-config.js';
import { parseOptionalSha256 } from '../../../src/domain/digest.js';
import { parseDownloadUrl } from '../../../src/domain/url-policy.js';
import { startFakeApiServer } from '../../support/kube/fake-apiserver.js';

const DEPLOY = join(import.meta.dirname, '../../../deploy');
const EXAMPLES = join(DEPLOY, 'examples');
const KUBECTL = '/usr/bin/kubectl';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { readonly [key: string]: Json };

const crd = loadAll(readFileSync(join(DEPLOY, 'machineoperation-crd.yaml'), 'utf8'))[0] as {
  spec: { group: string; versions: { name: string; schema: { openAPIV3Schema: Schema } }[] };
};
const version = crd.spec.versions[0];
if (version === undefined) throw new Error('the CRD serves no version');
const SCHEMA = version.schema.openAPIV3Schema;

const exampleFiles = readdirSync(EXAMPLES)
  .filter((name) => name.endsWith('.yaml'))
  .sort();
const examples = exampleFiles.flatMap((name) =>
  loadAll(readFileSync(join(EXAMPLES, name), 'utf8')).map((doc) => ({ name, doc: doc as Json })),
);

/** The only CEL rule the CRD carries, evaluated by hand. */
const EXACTLY_ONE_TARGET = 'has(self.machineRef) != has(self.machineSelector)';

/**
 * The subset of structural-schema validation the CRD uses: types, required, properties (unknown
 * fields refused, as strict field validation does), additionalProperties, enum, string lengths,
 * integer minimum, items, and its one x-kubernetes-validations rule. Returns the problems found.
 */
function validate(value: Json | undefined, schema: Schema, path = ''): string[] {
  const at = path === '' ? '.' : path;
  const type = schema['type'];
  if (value === undefined || value === null) return [`${at}: missing`];
  const isObject = typeof value === 'object' && !Array.isArray(value);
  if (type === 'object' && !isObject) return [`${at}: not an object`];
  if (type === 'array' && !Array.isArray(value)) return [`${at}: not an array`];
  if (type === 'string' && typeof value !== 'string') return [`${at}: not a string`];
  if (type === 'integer' && !Number.isInteger(value)) return [`${at}: not an integer`];
  if (type === 'boolean' && typeof value !== 'boolean') return [`${at}: not a boolean`];
  const problems: string[] = [];
  const enumeration = schema['enum'];
  if (Array.isArray(enumeration) && !enumeration.includes(value))
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${enumeration.join(', ')}`);
  if (typeof value === 'string') {
    const { minLength, maxLength } = schema;
    if (typeof minLength === 'number' && value.length < minLength) problems.push(`${at}: shorter than ${minLength}`);
    if (typeof maxLength === 'number' && value.length > maxLength) problems.push(`${at}: longer than ${maxLength}`);
  }
  if (typeof value === 'number' && typeof schema['minimum'] === 'number' && value < schema['minimum'])
    problems.push(`${at}: below ${schema['minimum']}`);
  if (Array.isArray(value) && typeof schema['items'] === 'object') {
    value.forEach((item, index) => problems.push(...validate(item, schema['items'] as Schema, `${path}[${index}]`)));
  }
  if (isObject) {
    const object = value as { [key: string]: Json };
    const properties = schema['properties'] as { [key: string]: Schema } | undefined;
    const additional = schema['additionalProperties'] as Schema | undefined;
    const required = (schema['required'] as string[] | undefined) ?? [];
    for (const key of required) if (!(key in object)) problems.push(`${path}.${key}: required`);
    for (const [key, child] of Object.entries(object)) {
      const childSchema = properties?.[key] ?? additional;
      if (childSchema !== undefined) problems.push(...validate(child, childSchema, `${path}.${key}`));
      else if (properties !== undefined) problems.push(`${path}.${key}: unknown field`);
    }
    for (const rule of (schema['x-kubernetes-validations'] as { rule: string }[] | undefined) ?? []) {
      if (rule.rule !== EXACTLY_ONE_TARGET) problems.push(`${at}: unsupported rule ${rule.rule}`);
      else if ('machineRef' in object === 'machineSelector' in object)
        problems.push(`${at}: exactly one of machineRef and machineSelector`);
    }
  }
  return problems;
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
    expect(validate({ ...base, spec }, SCHEMA)).toEqual([]);
    expect(validate({ ...base, spec: { ...spec, operationKind: 'Upgrade' } }, SCHEMA)).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, machineSelector: { matchLabels: {} } } }, SCHEMA)).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, parameters: { sha256: 5 } } }, SCHEMA)).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, machineRef: '' } }, SCHEMA)).toHaveLength(1);
    expect(validate({ ...base, spec: { ...spec, extra: true } }, SCHEMA)).toHaveLength(1);
    expect(validate(base, SCHEMA)).toHaveLength(1);
  });

  describe.each(examples.map((example, index) => [`${example.name}#${index}`, example.doc] as const))(
    '%s',
    (_name, doc) => {
      it('is a MachineOperation of the served version that the CRD schema accepts', () => {
        expect(doc).toMatchObject({ apiVersion: `${crd.spec.group}/${version.name}`, kind: 'MachineOperation' });
        expect(validate(doc, SCHEMA)).toEqual([]);
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
        const run = await kubectl(server.origin, scratch, ['create', '--validate=false', '-f', EXAMPLES, '-o', 'name']);
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
