import { performance } from 'node:perf_hooks';
import type { Logger } from '../../../ports/common/logger.js';
import { readAgentRecord, removeAgentRecord, type AgentRecord } from './agent-record.js';
import { KILL_WAIT_MS, signalGroup } from './process-group.js';
import { bootId, liveGroupMembers, readProcStat } from './proc-stat.js';

/** How often a stop in progress looks at /proc again. */
const POLL_MS = 50;

export type OrphanOutcome = 'none' | 'stopped' | 'survived';

/**
 * Stops the agent a previous supervisor recorded (agent-record.ts) if any of its process group
 * still runs: SIGTERM to the group, SIGKILL after `stopTimeoutMs`, as a stop of our own child.
 * Stopping and starting afresh rather than adopting: a non-child cannot be waited for, so an
 * adopted agent's exit status — and with it Restart=on-failure — would be lost.
 *
 * 'survived' (still there after SIGKILL, e.g. stuck in uninterruptible sleep) keeps the record,
 * and the caller must not start another agent.
 */
export async function stopOrphan(
  recordPath: string,
  stopTimeoutMs: number,
  logger: Logger,
  procRoot = '/proc',
): Promise<OrphanOutcome> {
  const record = readAgentRecord(recordPath);
  if (record === null) return 'none';
  if (orphanMembers(record, procRoot).length === 0) {
    removeAgentRecord(recordPath, record.pid);
    return 'none';
  }
  logger.warn(
    { pid: record.pid, path: record.executable },
    'The agent of a supervisor that died still runs; stopping it before starting a new one.',
  );
  signalGroup(record.pid, 'SIGTERM');
  if (!(await goneWithin(record, stopTimeoutMs, procRoot))) {
    signalGroup(record.pid, 'SIGKILL');
    if (!(await goneWithin(record, KILL_WAIT_MS, procRoot))) {
      logger.error({ pid: record.pid }, 'The agent of a supervisor that died did not exit even after SIGKILL.');
      return 'survived';
    }
  }
  removeAgentRecord(recordPath, record.pid);
  return 'stopped';
}

/**
 * The live processes of the recorded agent's group. When the recorded PID now belongs to a
 * process with another start time, the group is long gone (its ID could not have been reused
 * while it had members) and nothing is ours. When the leader itself is gone — killed by its
 * parent-death signal — what it forked may still run in its group.
 */
function orphanMembers(record: AgentRecord, procRoot: string): number[] {
  if (record.bootId !== bootId(procRoot)) return [];
  const leader = readProcStat(record.pid, procRoot);
  if (leader !== null && leader.startTime !== record.startTime) return [];
  return liveGroupMembers(record.pid, record.startTime, procRoot);
}

async function goneWithin(record: AgentRecord, timeoutMs: number, procRoot: string): Promise<boolean> {
  const deadlineMs = performance.now() + timeoutMs;
  for (;;) {
    if (orphanMembers(record, procRoot).length === 0) return true;
    if (performance.now() >= deadlineMs) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
