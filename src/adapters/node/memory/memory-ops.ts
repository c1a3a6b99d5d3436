import { FileSystemError, type FileSystemErrorCode } from '../../../domain/common/port-errors.js';
import { asFileSystemError } from '../host/file-system-shared.js';

/** The micro-steps of the model; each is one crash point and one fault point. */
export type OpKind =
  | 'create-temp' // create the temp exclusively, write all bytes, set the final mode
  | 'fsync-file'
  | 'rename'
  | 'fsync-dir'
  | 'symlink-temp'
  | 'unlink'
  | 'mkdir'
  | 'cleanup'; // unlink of a temp after a failure

/** One op. For `rename`, `path` is the destination (the entry that changes) and `detail` the source. */
export interface JournalEntry {
  readonly index: number;
  readonly op: OpKind;
  readonly path: string;
  readonly detail?: string;
}

export type MutationHook = (op: JournalEntry) => void;
export type FaultCode = Extract<FileSystemErrorCode, 'ENOSPC' | 'EIO' | 'EROFS' | 'EDQUOT' | 'EACCES' | 'EPERM'>;
export type FaultPredicate = (op: JournalEntry) => boolean;

/**
 * The simulated process died. Deliberately not a FileSystemError: code under test must not be
 * able to catch it as an ordinary failure and carry on.
 */
export class SimulatedCrash extends Error {
  /** The op that was about to run when the process died; `null` for calls made afterwards. */
  readonly op: JournalEntry | null;

  constructor(op: JournalEntry | null) {
    super(
      op === null ? 'the simulated process has crashed' : `simulated crash at op ${op.index} (${op.op} ${op.path})`,
    );
    this.name = 'SimulatedCrash';
    this.op = op;
  }
}

/**
 * Numbers the ops, applies crash points, injected faults and the mutation hook, and journals
 * what completed. Failed ops consume an index but are not journalled: they had no effect.
 */
export class OpRunner {
  readonly journal: JournalEntry[] = [];
  private nextIndex = 0;
  private crashIndex: number | null = null;
  private dead = false;
  private hook: MutationHook | null = null;
  private readonly faultsAt = new Map<number, FaultCode>();
  private readonly faultRules: { readonly predicate: FaultPredicate; readonly code: FaultCode }[] = [];

  get opCount(): number {
    return this.nextIndex;
  }

  get crashed(): boolean {
    return this.dead;
  }

  crashAt(index: number): void {
    if (!Number.isInteger(index) || index < this.nextIndex) throw new RangeError(`op ${index} has already run`);
    this.crashIndex = index;
  }

  failAt(index: number, code: FaultCode): void {
    if (!Number.isInteger(index) || index < this.nextIndex) throw new RangeError(`op ${index} has already run`);
    this.faultsAt.set(index, code);
  }

  failWhen(predicate: FaultPredicate, code: FaultCode): void {
    this.faultRules.push({ predicate, code });
  }

  clearFaults(): void {
    this.faultsAt.clear();
    this.faultRules.length = 0;
  }

  setHook(hook: MutationHook | null): void {
    this.hook = hook;
  }

  assertAlive(): void {
    if (this.dead) throw new SimulatedCrash(null);
  }

  /** Runs one op. Its effect must be synchronous, so the op is atomic at the model level. */
  run(op: OpKind, path: string, detail: string | undefined, effect: () => void): void {
    this.assertAlive();
    const entry: JournalEntry =
      detail === undefined ? { index: this.nextIndex, op, path } : { index: this.nextIndex, op, path, detail };
    this.nextIndex += 1;
    if (entry.index === this.crashIndex) {
      this.dead = true;
      throw new SimulatedCrash(entry);
    }
    this.hook?.(entry);
    const fault = this.faultsAt.get(entry.index) ?? this.faultRules.find((rule) => rule.predicate(entry))?.code;
    if (fault !== undefined) throw new FileSystemError(fault, op, path, 'injected fault');
    try {
      effect();
    } catch (error) {
      throw asFileSystemError(error, op, path);
    }
    this.journal.push(entry);
  }
}
