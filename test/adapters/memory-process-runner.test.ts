import { describe, expect, it } from 'vitest';
import { MemoryProcessRunner, versionOutcome } from '../../src/adapters/node/memory/memory-process-runner.js';
import type { RunRequest } from '../../src/ports/common/process-runner.js';

describe('MemoryProcessRunner', () => {
  const request = (command: string, extra: Partial<RunRequest> = {}): RunRequest => ({
    command,
    args: ['version'],
    timeoutMs: 5_000,
    outputMaxBytes: 1024,
    ...extra,
  });

  it('fails to spawn unscripted commands (ENOENT) and logs every run', async () => {
    const runner = new MemoryProcessRunner();
    const args = ['version'];
    expect(await runner.run(request('/opt/agent', { args }))).toEqual({ kind: 'spawn-failed', code: 'ENOENT' });
    args.push('mutated');
    expect(runner.runs.map((run) => [run.command, run.args])).toEqual([['/opt/agent', ['version']]]);
  });

  it('plays fixed and computed outcomes per command', async () => {
    const runner = new MemoryProcessRunner();
    runner.setBehaviour('/slots/blue/agent', versionOutcome('1.2.3'));
    runner.setBehaviour('/bin/systemctl', (run) => ({
      kind: 'exited',
      exitCode: run.args.includes('restart') ? 0 : 3,
      stdout: '',
      stderr: '',
    }));
    expect(await runner.run(request('/slots/blue/agent'))).toEqual({
      kind: 'exited',
      exitCode: 0,
      stdout: 'agent version v1.2.3\n',
      stderr: '',
    });
    expect(await runner.run(request('/bin/systemctl', { args: ['restart', 'agent'] }))).toMatchObject({ exitCode: 0 });
    expect(await runner.run(request('/bin/systemctl', { args: ['is-active', 'agent'] }))).toMatchObject({
      exitCode: 3,
    });
    runner.clearBehaviour('/slots/blue/agent');
    expect(await runner.run(request('/slots/blue/agent'))).toMatchObject({ kind: 'spawn-failed' });
    expect(runner.runs).toHaveLength(4);
  });

  it('caps output at outputMaxBytes and reports an aborted run as timed out', async () => {
    const runner = new MemoryProcessRunner();
    runner.setBehaviour('/noisy', {
      kind: 'signalled',
      signal: 'SIGKILL',
      stdout: 'x'.repeat(100),
      stderr: 'y'.repeat(5),
    });
    expect(await runner.run(request('/noisy', { outputMaxBytes: 10 }))).toEqual({
      kind: 'signalled',
      signal: 'SIGKILL',
      stdout: 'x'.repeat(10),
      stderr: 'yyyyy',
    });
    expect(await runner.run(request('/noisy', { signal: AbortSignal.abort() }))).toEqual({ kind: 'timed-out' });
  });
});
