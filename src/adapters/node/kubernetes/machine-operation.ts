import { machineTargetOf, type MachineTarget } from '../../../domain/common/machine-selector.js';
import type { OperationPhase } from '../../../ports/node/operation-store.js';
import { isOneOf } from '../../../domain/common/one-of.js';

/** The fields of a MachineOperation the daemon reads, from untrusted JSON. */
export interface MachineOperationView {
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly generation: number;
  readonly operationKind: string;
  readonly target: MachineTarget;
  readonly parameters: Readonly<Record<string, string>>;
  readonly phase: OperationPhase | null;
  readonly reason: string | null;
  readonly message: string | null;
  readonly startedAt: string | null;
  /** `status.conditions` as stored (a status merge-patch replaces the whole list, so it is written back). */
  readonly conditions: readonly Readonly<Record<string, unknown>>[];
}

const PHASES: readonly OperationPhase[] = ['Pending', 'InProgress', 'Complete', 'Failed'];

/** `null` for anything that is not a readable MachineOperation (it is then ignored, never guessed at). */
export function readMachineOperation(object: unknown): MachineOperationView | null {
  if (!isRecord(object) || !isRecord(object['metadata'])) return null;
  const metadata = object['metadata'];
  const spec = isRecord(object['spec']) ? object['spec'] : {};
  const status = isRecord(object['status']) ? object['status'] : {};
  const name = metadata['name'];
  const uid = metadata['uid'];
  const resourceVersion = metadata['resourceVersion'];
  if (typeof name !== 'string' || typeof uid !== 'string' || typeof resourceVersion !== 'string') return null;
  const parameters: Record<string, string> = {};
  if (isRecord(spec['parameters'])) {
    for (const [key, value] of Object.entries(spec['parameters']))
      if (typeof value === 'string') parameters[key] = value;
  }
  const phase = status['phase'];
  const conditions = Array.isArray(status['conditions']) ? status['conditions'].filter(isRecord) : [];
  const completed = conditions.find((entry) => entry['type'] === 'Completed');
  return {
    name,
    uid,
    resourceVersion,
    generation: typeof metadata['generation'] === 'number' ? metadata['generation'] : 0,
    operationKind: typeof spec['operationKind'] === 'string' ? spec['operationKind'] : '',
    target: machineTargetOf(spec),
    parameters,
    phase: isOneOf(PHASES, phase) ? phase : null,
    reason: isRecord(completed) && typeof completed['reason'] === 'string' ? completed['reason'] : null,
    message: typeof status['message'] === 'string' ? status['message'] : null,
    startedAt: typeof status['startedAt'] === 'string' ? status['startedAt'] : null,
    conditions,
  };
}

export function isTerminalPhase(phase: OperationPhase | null): boolean {
  return phase === 'Complete' || phase === 'Failed';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
