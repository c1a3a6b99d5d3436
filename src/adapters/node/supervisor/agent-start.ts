import { accessSync, constants } from 'node:fs';
import type { Logger } from '../../../ports/common/logger.js';
import { describeProcess, writeAgentRecord } from './agent-record.js';
import { launchCommand, waitPastLauncher } from './death-signal.js';
import { stopOrphan } from './orphan.js';
import { ProcessGroup } from './process-group.js';

export interface AgentStartSettings {
  readonly execStart: string;
  readonly args: readonly string[];
  readonly recordPath: string;
  readonly stopTimeoutMs: number;
  /** setpriv's real path when the agent gets the parent-death signal, else null. */
  readonly launcher: string | null;
  readonly logger: Logger;
}

export type AgentStart =
  | { readonly kind: 'spawned'; readonly group: ProcessGroup }
  | { readonly kind: 'spawn-failed'; readonly code: string }
  /** An agent a dead supervisor left behind survived SIGKILL: starting another would make two. */
  | { readonly kind: 'orphan-survived' };

/**
 * One start of the agent: first stops whatever a killed supervisor left running (orphan.ts),
 * then spawns, then records the new agent. Checked at every start rather than once at startup,
 * so no path that starts the agent (a restart, the hook's recovery) can skip it.
 */
export async function startAgent(settings: AgentStartSettings): Promise<AgentStart> {
  if ((await stopOrphan(settings.recordPath, settings.stopTimeoutMs, settings.logger)) === 'survived')
    return { kind: 'orphan-survived' };
  // Through the launcher a missing or non-executable agent would be setpriv's exit 127; checked
  // first so it stays a failed start with its errno, as without it (the exec may still fail later).
  if (settings.launcher !== null) {
    const code = unexecutable(settings.execStart);
    if (code !== null) return { kind: 'spawn-failed', code };
  }
  const { command, args } = launchCommand(settings.launcher, settings.execStart, settings.args);
  const outcome = await ProcessGroup.spawn(command, args);
  if (outcome.kind === 'failed') return { kind: 'spawn-failed', code: outcome.code };
  const group = outcome.group;
  if (settings.launcher !== null) await waitPastLauncher(group.pid, settings.launcher, () => group.hasExited);
  recordAgent(settings, group.pid);
  return { kind: 'spawned', group };
}

function recordAgent(settings: AgentStartSettings, pid: number): void {
  // Gone already (its exit is handled as any other); nothing to protect against.
  const record = describeProcess(pid);
  if (record === null) return;
  try {
    writeAgentRecord(settings.recordPath, record);
  } catch (error) {
    // The agent runs; only a later supervisor's protection against it is lost, so it keeps running.
    settings.logger.warn(
      { path: settings.recordPath, code: (error as NodeJS.ErrnoException).code },
      'Could not record the agent; a supervisor started after a crash of this one may not find it.',
    );
  }
}

function unexecutable(path: string): string | null {
  try {
    accessSync(path, constants.X_OK);
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'UNKNOWN';
  }
}
