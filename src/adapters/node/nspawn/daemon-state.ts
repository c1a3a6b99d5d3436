import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { ContainerError } from '../../../domain/common/port-errors.js';
import { isMachineName } from '../../../domain/node/record/upgrade-record.js';
import { errnoCode } from '../host/file-system-shared.js';

/** The daemon's state file is small; anything bigger is not one, and is never read whole. */
export const DAEMON_STATE_MAX_BYTES = 64 * 1024;

/**
 * The active machine named by the daemon's state file (`paths.daemonState`, `activeMachine`), or
 * `null` when the file is absent or names none (absent, null or empty field: a reset host). The
 * file is written by another program, so its content is checked and never echoed: only a name that
 * already passed isMachineName (short, safe alphabet) appears in an error message.
 */
export async function readActiveMachine(path: string, machines: readonly string[]): Promise<string | null> {
  const text = await readBoundedText(path);
  if (text === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalid('is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('is not a JSON object');
  const value: unknown = (parsed as Record<string, unknown>)['activeMachine'];
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw invalid('has an activeMachine that is not a string');
  if (!isMachineName(value)) throw invalid('has an activeMachine that is not a valid machine name');
  if (!machines.includes(value))
    throw invalid(`names machine "${value}", which is not one of the configured machines (${machines.join(', ')})`);
  return value;
}

function invalid(problem: string): ContainerError {
  return new ContainerError('invalid-machine', `the daemon state file ${problem}`);
}

/** The file's text, or `null` when absent; refused past DAEMON_STATE_MAX_BYTES or when not UTF-8. */
async function readBoundedText(path: string): Promise<string | null> {
  let handle: FileHandle;
  try {
    // O_NONBLOCK: a FIFO at the path must not hang the daemon; it is refused below.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return null;
    throw error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new ContainerError('io', 'the daemon state file is not a regular file');
    // One byte more than allowed tells "exactly at the limit" from "over it", whatever fstat said.
    const buffer = Buffer.alloc(DAEMON_STATE_MAX_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > DAEMON_STATE_MAX_BYTES) throw invalid(`is larger than ${DAEMON_STATE_MAX_BYTES} bytes`);
    }
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
    } catch {
      throw invalid('is not UTF-8 text');
    }
  } finally {
    await handle.close();
  }
}
