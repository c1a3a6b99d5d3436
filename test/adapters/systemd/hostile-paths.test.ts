import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execCommandLine } from '../../../src/adapters/node/systemd/render-units.js';
import { systemdAssets } from '../../../src/app/node/composition/service-platform.module.js';
import { checkConfigValue } from '../../../src/app/node/config/parse-config.js';
import type { UpgraderConfig } from '../../../src/app/node/config/upgrader-config.js';
import { InvariantViolation } from '../../../src/domain/common/invariant.js';
import { deriveLayout } from '../../../src/domain/node/layout/slot-layout.js';
import { makeScratch, makeSymlink, writeExecutable } from '../../support/real-tree.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
/** verify looks up the man: URI the units name: the repository's page. */
const VERIFY_ENV = { ...process.env, MANPATH: join(REPO, 'man') };
const IDENTITY = { euid: 0, arch: 'amd64', pid: 1, command: 'test' } as const;
const PROGRAM = '#!/bin/sh\nexit 0\n';

function verify(...units: string[]) {
  const run = spawnSync('systemd-analyze', ['verify', ...units], { encoding: 'utf8', env: VERIFY_ENV });
  return { status: run.status, stderr: run.stderr, stdout: run.stdout };
}

/**
 * Every path the configuration admits must give units systemd uses; a path it cannot name is
 * refused by the configuration instead (docs/configuration.md#validation).
 */
describe('systemd units for a slot directory whose path holds characters systemd treats specially', () => {
  let scratch: ReturnType<typeof makeScratch>;
  beforeEach(() => {
    scratch = makeScratch();
  });
  afterEach(() => scratch.cleanup());

  /** Writes the units and the script as the systemd platform does, with current leading to blue. */
  const install = (config: UpgraderConfig): string[] => {
    const layout = deriveLayout({ root: config.root, agentName: config.agent.name, ...config.paths });
    if (!layout.ok) throw new Error(layout.failure.message);
    writeExecutable(layout.value.blue, PROGRAM);
    makeSymlink(layout.value.current, 'aks-flex-node-blue');
    const assets = systemdAssets(config, layout.value, IDENTITY);
    for (const asset of assets) writeExecutable(asset.path, asset.text, asset.mode);
    return assets.filter((asset) => asset.path.endsWith('.service')).map((asset) => asset.path);
  };

  it.each([
    ['a space', ' '],
    ['a dollar', '$'],
    ['"$$" and "${HOME}", which an argument would expand', '$$x${HOME}'],
    ['a percent sign', '%'],
    ['a semicolon and a hash', ';#'],
  ])('admits %s: both units pass `systemd-analyze verify` without a warning', (_name, text) => {
    const check = checkConfigValue({ root: scratch.root, paths: { slotDir: `/slots/a${text}b` } });
    if (!check.ok) throw new Error(check.problem.problem);
    expect(verify(...install(check.config))).toEqual({ status: 0, stderr: '', stdout: '' });
  });

  it.each([
    ['a single quote', "'"],
    ['a double quote', '"'],
    ['a backslash', '\\'],
    ['a newline', '\n'],
  ])('refuses %s in paths.slotDir (E_CONFIG), and the renderer refuses it too', (_name, text) => {
    const check = checkConfigValue({ root: scratch.root, paths: { slotDir: `/slots/a${text}b` } });
    expect(check.ok ? null : check.problem.keys).toEqual(['paths.slotDir']);
    expect(() => execCommandLine(`/slots/a${text}b/agent`, [])).toThrow(InvariantViolation);
  });

  it.each([
    ['a single quote', "'"],
    ['a double quote', '"'],
    ['a backslash', '\\'],
  ])('refuses %s in root (E_CONFIG) with systemd, but not without a service manager', (_name, text) => {
    const root = join(scratch.root, `a${text}b`);
    const refused = checkConfigValue({ root });
    expect(refused.ok ? null : refused.problem.keys).toEqual(['root']);
    expect(checkConfigValue({ root, service: { manager: 'none' } }).ok).toBe(true);
  });

  it.each([
    ['a single quote', "'"],
    ['a double quote', '"'],
    ['a backslash', '\\'],
  ])('is right to: systemd itself rejects %s in the program path, however it is escaped', (_name, text) => {
    const program = join(scratch.root, `a${text}b`, 'agent');
    writeExecutable(program, PROGRAM);
    const unit = join(scratch.root, 'probe.service');
    const quoted = `"${program.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    writeFileSync(unit, `[Unit]\nDescription=probe\n\n[Service]\nType=exec\nExecStart=${quoted}\n`);
    expect(verify(unit).status).not.toBe(0);
  });
});
