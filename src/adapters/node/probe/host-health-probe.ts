import type { ProbeOutcome, ProbeTarget } from '../../../domain/node/health/probe-target.js';
import type { ProcessRunner } from '../../../ports/common/process-runner.js';
import type { HealthProbe, ProbeAttemptOptions } from '../../../ports/node/health-probe.js';
import { attemptExec } from './exec-probe.js';
import { attemptHttp } from './http-probe.js';

/** The real host's probe: exec through the process runner, HTTP over loopback or a unix socket. */
export class HostHealthProbe implements HealthProbe {
  constructor(private readonly runner: ProcessRunner) {}

  attempt(target: ProbeTarget, options: ProbeAttemptOptions): Promise<ProbeOutcome> {
    switch (target.kind) {
      case 'exec':
        return attemptExec(this.runner, target.command, options);
      case 'http':
      case 'unix-http':
        return attemptHttp(target, options);
    }
  }
}
