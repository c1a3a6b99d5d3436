import { parseRecord, type UpgradeRecord } from '../../src/domain/node/record/upgrade-record.js';
import type { MemoryOperationStore } from '../../src/adapters/node/memory/memory-operation-store.js';
import { CONFIG, LAYOUT, type ManagedWorld } from './managed-world.js';

// What the managed simulation's checkers and trace read of the host: a view taken through the FS
// port after every step, and the labels that make digests and paths readable in a trace.

export const CONTAINER_COPY = '/var/lib/machines/kube1/usr/local/bin/aks-flex-node';
const BINARY_MAX_BYTES = CONFIG.artifact.maxBinaryBytes;
/** The record is read whole; a real one is a few hundred bytes. */
const RECORD_BYTES_MAX = 64 * 1024;

export interface HostView {
  /** The real path the agent's binary is at: current's target, or the legacy entry. */
  readonly current: string | null;
  readonly viaCurrent: boolean;
  readonly currentDigest: string | null;
  readonly currentExecutable: boolean;
  readonly lastGood: string | null;
  readonly nspawn: string | null;
  readonly record: UpgradeRecord | null | 'invalid';
}

/**
 * The host as the invariants need it, read through the FS port (cheaper than a snapshot of the
 * whole tree after every step): what current (or, before migration, the entry) resolves to,
 * last-good, the nspawn copy and the record.
 */
export async function observeHost(world: ManagedWorld): Promise<HostView> {
  const { fs } = world;
  let target = await fs.resolve(LAYOUT.current);
  const viaCurrent = target.kind === 'resolved';
  if (!viaCurrent) target = await fs.resolve(LAYOUT.entry);
  const file = target.kind === 'resolved' && target.stat.kind === 'file' ? target : null;
  const lastGood = await fs.resolve(LAYOUT.lastGood);
  const copy = await fs.lstat(CONTAINER_COPY);
  return {
    current: target.kind === 'resolved' ? target.path : null,
    viaCurrent,
    currentDigest: file === null ? null : (await fs.hashFile(file.path, BINARY_MAX_BYTES)).sha256,
    currentExecutable: file !== null && (file.stat.mode & 0o111) !== 0,
    lastGood: lastGood.kind === 'resolved' ? lastGood.path : null,
    nspawn: copy?.kind === 'file' ? (await fs.hashFile(CONTAINER_COPY, BINARY_MAX_BYTES)).sha256 : null,
    record: await readRecord(world),
  };
}

async function readRecord(world: ManagedWorld): Promise<UpgradeRecord | null | 'invalid'> {
  const stat = await world.fs.lstat(LAYOUT.record);
  if (stat === null) return null;
  if (stat.kind !== 'file') return 'invalid';
  const bytes = await world.fs.readFile(LAYOUT.record, RECORD_BYTES_MAX);
  if (bytes === null) return null;
  const parsed = parseRecord(new TextDecoder().decode(bytes));
  return parsed.ok ? parsed.value : 'invalid';
}

/** Every binary digest the host may legitimately hold, with its version label. */
export class VersionLabels {
  private readonly labels = new Map<string, string>();

  set(digest: string, label: string): void {
    this.labels.set(digest, label);
  }

  has(digest: string): boolean {
    return this.labels.has(digest);
  }

  of(digest: string | null): string {
    return digest === null ? 'nothing' : (this.labels.get(digest) ?? `unknown ${digest.slice(0, 8)}`);
  }
}

export function slotLabel(path: string | null): string {
  if (path === null) return 'nothing';
  return path === LAYOUT.blue ? 'blue' : path === LAYOUT.green ? 'green' : path === LAYOUT.entry ? 'legacy' : path;
}

/** `cur=green:v2.0.0 lg=blue nspawn=v2.0.0 rec=c:green,sw,fail:E_UNHEALTHY,rr up1=InProgress`. */
export function hostSummary(
  view: HostView,
  versions: VersionLabels,
  store: MemoryOperationStore,
  latestOperation: string | undefined,
): string {
  const record = view.record;
  const recordText = record === null ? '-' : record === 'invalid' ? 'INVALID' : summarizeRecord(record);
  const phase =
    latestOperation === undefined ? '' : ` ${latestOperation}=${store.get(latestOperation)?.phase ?? 'new'}`;
  const current = view.viaCurrent ? slotLabel(view.current) : 'legacy';
  return `cur=${current}:${versions.of(view.currentDigest)} lg=${slotLabel(view.lastGood)} nspawn=${versions.of(view.nspawn)} rec=${recordText}${phase}`;
}

function summarizeRecord(record: UpgradeRecord): string {
  const parts = [`c:${record.candidate ?? '-'}`];
  if (record.switchCommitted) parts.push('sw');
  if (record.failure !== null) parts.push(`fail:${record.failure.code}`);
  if (record.recoveryRequired) parts.push('rr');
  if (record.completed) parts.push('done');
  return parts.join(',');
}
