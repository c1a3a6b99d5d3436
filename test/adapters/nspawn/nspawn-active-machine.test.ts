import { mkdirSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { containerErrorCode, makeNspawnScratch, type NspawnScratch } from './nspawn-fixture.js';

let host: NspawnScratch;

beforeEach(() => {
  host = makeNspawnScratch();
});

afterEach(() => {
  host.cleanup();
});

describe('NspawnContainerRootfs.activeMachine', () => {
  it('is null when the daemon state file is absent', async () => {
    expect(await host.rootfs().activeMachine()).toBeNull();
  });

  it.each([
    ['null', '{"activeMachine":null}'],
    ['absent', '{"other":1}'],
    ['empty', '{"activeMachine":""}'],
  ])('is null when activeMachine is %s', async (_case, text) => {
    writeFileSync(host.statePath, text);
    expect(await host.rootfs().activeMachine()).toBeNull();
  });

  it('returns a configured machine', async () => {
    writeFileSync(host.statePath, JSON.stringify({ activeMachine: 'kube2', since: '2024-01-01T00:00:00Z' }));
    expect(await host.rootfs().activeMachine()).toBe('kube2');
  });

  it.each([
    ['invalid JSON', '{"activeMachine":'],
    ['a JSON array', '["kube1"]'],
    ['JSON null', 'null'],
    ['a JSON string', '"kube1"'],
    ['a number', '{"activeMachine":1}'],
    ['an object', '{"activeMachine":{"name":"kube1"}}'],
    ['an unknown machine', '{"activeMachine":"kube3"}'],
    ['a path', '{"activeMachine":"../../etc"}'],
    ['a huge name', JSON.stringify({ activeMachine: 'k'.repeat(10_000) })],
    ['an oversized file', JSON.stringify({ activeMachine: 'kube1', padding: 'p'.repeat(70 * 1024) })],
  ])('refuses %s with invalid-machine', async (_case, text) => {
    writeFileSync(host.statePath, text);
    expect(await containerErrorCode(host.rootfs().activeMachine())).toBe('invalid-machine');
  });

  it('refuses a file that is not UTF-8 with invalid-machine', async () => {
    writeFileSync(host.statePath, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]));
    expect(await containerErrorCode(host.rootfs().activeMachine())).toBe('invalid-machine');
  });

  it('fails with io when the state path is not a regular file', async () => {
    mkdirSync(host.statePath);
    expect(await containerErrorCode(host.rootfs().activeMachine())).toBe('io');
  });
});
