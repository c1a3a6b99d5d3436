/**
 * `agent-upgrade controller` in memory: its help, and the flags and configuration it refuses
 * (exit 2, E_USAGE or E_CONFIG) before it ever reaches for a cluster.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kubeconfigDocument, writeKubeconfigFile } from '../support/kube/kubeconfig-builder.js';
import { runCliInMemory } from '../support/run-cli.js';

async function controller(...argv: string[]) {
  const run = await runCliInMemory(['controller', ...argv, '--json']);
  const document = JSON.parse(run.stdout) as { ok: boolean; error?: { code: string } };
  return { exitCode: run.exitCode, ok: document.ok, code: document.error?.code ?? null };
}

describe('agent-upgrade controller', () => {
  it('--help is exit 0 and lists every option', async () => {
    const run = await runCliInMemory(['controller', '--help']);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('agent-upgrade controller');
    for (const option of [
      '--kubeconfig',
      '--namespace',
      '--events-namespace',
      '--identity',
      '--lease-name',
      '--lease-duration',
      '--renew-deadline',
      '--retry-period',
      '--resync',
      '--metrics-address',
      '--kube-api-qps',
      '--kube-api-burst',
      '--config',
      '--log-level',
      '--json',
    ])
      expect(run.stdout).toContain(option);
  });

  it.each([
    [['--lease-duration', 'nope']],
    [['--renew-deadline', '20s']],
    [['--retry-period', '10s']],
    [['--resync', '0s']],
    [['--metrics-address', '8080']],
    [['--log-level', 'loud']],
    [['--kube-api-qps', 'fast']],
    [['--kube-api-qps', '1e3']],
    [['--kube-api-burst', '0']],
    [['--kube-api-burst', '2.5']],
  ])('%j is E_USAGE, exit 2', async (argv) => {
    expect(await controller(...argv)).toEqual({ exitCode: 2, ok: false, code: 'E_USAGE' });
  });

  it('a --config path that is not absolute is E_USAGE, exit 2', async () => {
    expect(await controller('--config', 'controller.json')).toEqual({ exitCode: 2, ok: false, code: 'E_USAGE' });
  });

  it('a --config file that is missing or invalid is E_CONFIG, exit 2, before any cluster is reached', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'controller-cli-'));
    try {
      const invalid = join(dir, 'controller.json');
      writeFileSync(invalid, JSON.stringify({ trust: { mode: 'tuf' } }));
      for (const path of [join(dir, 'missing.json'), invalid])
        expect(await controller('--config', path)).toEqual({ exitCode: 2, ok: false, code: 'E_CONFIG' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a trust.rootFile that cannot be read is E_CONFIG, exit 2, before any cluster is reached', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'controller-cli-'));
    try {
      const config = join(dir, 'controller.json');
      const trust = {
        mode: 'tuf',
        rootFile: join(dir, 'missing-root.json'),
        cacheDir: join(dir, 'trust'),
        metadataUrl: 'https://releases.example/metadata/',
        targetsUrl: 'https://releases.example/targets/',
      };
      writeFileSync(config, JSON.stringify({ trust }));
      // A cluster that answers nothing: reaching for it would run the controller until stopped.
      const kubeconfig = writeKubeconfigFile(
        join(dir, 'kubeconfig'),
        kubeconfigDocument({ server: 'https://127.0.0.1:9' }, {}),
      );
      expect(await controller('--config', config, '--kubeconfig', kubeconfig, '--metrics-address', 'off')).toEqual({
        exitCode: 2,
        ok: false,
        code: 'E_CONFIG',
      });
      expect(existsSync(trust.cacheDir)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an unknown flag is E_USAGE, exit 2', async () => {
    expect(await controller('--leader-lease', '15s')).toMatchObject({ exitCode: 2, code: 'E_USAGE' });
  });
});
