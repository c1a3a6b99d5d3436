/**
 * The node daemons of a simulated fleet, following the real node contract over the API server:
 * each machine takes only the Pending AgentUpgrade operations whose machineRef is its own, one at
 * a time; it writes InProgress, then after the upgrade (and the agent's restart) a terminal
 * status, with the daemon's own status patches (resourceVersion-guarded merge patches); a
 * machine that took the new version reports it in its Node's agent-version annotation, even when
 * its operation was deleted mid-upgrade (the daemon finishes what it started); one whose new
 * agent never came healthy (DaemonFailed) is back on its last-good version and reports nothing,
 * since its version did not change. What happens to each operation is decided by the
 * `behaviour` from the machine's labels, so failures can be keyed on, say, architecture. Time is
 * the virtual clock's; every write is a real HTTP request, counted by the fake API server.
 */
import { ClusterError } from '../../../src/domain/common/port-errors.js';
import { runInformer, type InformerParts } from '../../../src/adapters/fleet/kubernetes/informer.js';
import type { KubeHttp } from '../../../src/adapters/common/kubernetes/kube-http.js';
import {
  readMachineOperation,
  type MachineOperationView,
} from '../../../src/adapters/node/kubernetes/machine-operation.js';
import { MACHINE_OPERATIONS_PATH } from '../../../src/adapters/common/kubernetes/machine-operation-resource.js';
import { inProgressPatch, terminalPatch } from '../../../src/adapters/node/kubernetes/status-patch.js';
import type { TerminalStatus } from '../../../src/ports/node/operation-store.js';
import type { Clock } from '../../../src/ports/common/clock.js';

export type DaemonOutcome = 'Succeeded' | 'DaemonFailed' | 'ExecutionFailed' | 'InvalidParameters' | 'hang';

/**
 * What a machine's kubelet does with its Lease after an upgrade, in worlds that have kubelets:
 * renews it (the default), never renews it again (`silent`), or renews it once and then dies.
 */
export type Kubelet = 'renews' | 'silent' | 'dies';

export interface FleetMachine {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  version: string;
  /** Gone from the cluster: its daemon does nothing more. */
  vanished: boolean;
  readonly kubelet?: Kubelet;
}

export interface DaemonTimings {
  /** From the operation's arrival to InProgress. */
  readonly claimMs: number;
  /** From InProgress to the terminal status: one of these, by machine. */
  readonly upgradeMs: readonly number[];
  /**
   * Daemons act on this grid of virtual time (the next grid point after each wait), so that a
   * fleet's writes fall on few instants, as a simulation step does; without it every instant a
   * plan happened at would seed instants of its own, and the run would be planned thousands of
   * times more for nothing it tests.
   */
  readonly tickMs: number;
}

export interface FleetDaemonsOptions {
  readonly http: KubeHttp;
  readonly informer: Omit<InformerParts, 'count'>;
  readonly clock: Clock;
  readonly machines: ReadonlyMap<string, FleetMachine>;
  /** The version an operation installs, from its download URL. */
  readonly versionOf: (downloadURL: string) => string;
  readonly behaviour: (machine: FleetMachine, targetVersion: string) => DaemonOutcome;
  readonly timings: DaemonTimings;
  /** Renews the machine's Lease, stamped `aheadMs` after now, for this long (worlds with kubelets). */
  readonly renewLease?: (machine: FleetMachine, durationSeconds: number, aheadMs: number) => void;
}

const RETRY_MS = 5_000;
/**
 * A kubelet's renewal after its node's agent restarted is stamped this far after the terminal
 * status, but written at the same instant of virtual time: a later instant of its own for every
 * completion would add a plan of the whole fleet each time, for nothing the gate does differently.
 */
const KUBELET_AHEAD_MS = 1;
/**
 * A real kubelet renews a 40-second Lease every ten seconds; renewing once for a week stands for
 * that without the 100,000s of renewals it would cost (the gate only asks whether a renewal came
 * after the upgrade, and whether the Lease ran out since). A kubelet that dies holds the real 40 s.
 */
export const SIM_LEASE_SECONDS = 7 * 86_400;
const DYING_LEASE_SECONDS = 40;
const ATTEMPTS_MAX = 8;

export class FleetDaemons {
  /** The latest view of every operation, by name, from the daemons' watch. */
  private readonly operations = new Map<string, MachineOperationView>();
  private readonly taken = new Set<string>();
  private readonly busy = new Set<string>();
  /** Operations that arrived while their machine was busy, taken when it is done. */
  private readonly waiting = new Map<string, string[]>();
  private pendingWrites = 0;
  eventsApplied = 0;

  constructor(private readonly o: FleetDaemonsOptions) {}

  /** Requests sent and not answered yet. */
  get writesInFlight(): number {
    return this.pendingWrites;
  }

  run(signal: AbortSignal): Promise<void> {
    return runInformer(
      { ...this.o.informer, count: () => undefined },
      { resource: 'machineoperations', path: MACHINE_OPERATIONS_PATH, read: readMachineOperation },
      (event) => {
        if (event.type === 'replace') {
          this.operations.clear();
          for (const operation of event.objects) this.arrived(operation);
          return;
        }
        this.eventsApplied += 1;
        if (event.type === 'delete') this.operations.delete(event.name);
        else this.arrived(event.object);
      },
      signal,
    );
  }

  private arrived(operation: MachineOperationView): void {
    this.operations.set(operation.name, operation);
    if (operation.operationKind !== 'AgentUpgrade' || operation.target.kind !== 'machine-ref') return;
    if (operation.phase !== null && operation.phase !== 'Pending') return;
    const machine = this.o.machines.get(operation.target.name);
    if (machine === undefined || machine.vanished || this.taken.has(operation.uid)) return;
    // One operation at a time per machine, as the daemon's work queue does.
    if (this.busy.has(machine.name)) {
      this.waiting.set(machine.name, [...(this.waiting.get(machine.name) ?? []), operation.name]);
      return;
    }
    this.taken.add(operation.uid);
    this.busy.add(machine.name);
    void this.handle(machine, operation.name).finally(() => {
      this.busy.delete(machine.name);
      const next = this.waiting.get(machine.name)?.shift();
      const queued = next === undefined ? undefined : this.operations.get(next);
      if (queued !== undefined) this.arrived(queued);
    });
  }

  private async handle(machine: FleetMachine, name: string): Promise<void> {
    const { timings } = this.o;
    await this.sleepOnGrid(timings.claimMs);
    const claimed = await this.writeStatus(machine, name, (op, iso) => inProgressPatch(op, 'upgrading', iso));
    if (claimed !== 'written') return;
    const target = this.o.versionOf(this.operations.get(name)?.parameters['downloadURL'] ?? '');
    const outcome = this.o.behaviour(machine, target);
    if (outcome === 'hang') return;
    await this.sleepOnGrid(timings.upgradeMs[hashOf(machine.name) % timings.upgradeMs.length] ?? 60_000);
    if (machine.vanished) return;
    const status = terminalOf(outcome);
    const written = await this.writeStatus(machine, name, (op, iso) => terminalPatch(op, status, iso));
    // A daemon whose operation was deleted mid-upgrade finishes anyway and reports what it runs.
    if (written === 'refused') return;
    if (outcome === 'Succeeded') this.kubeletBack(machine);
    if (outcome === 'Succeeded' && machine.version !== target) {
      machine.version = target;
      await this.reportVersion(machine, target);
    }
  }

  /** The node's kubelet after the agent's restart: renews its Lease, unless it stopped. */
  private kubeletBack(machine: FleetMachine): void {
    const renew = this.o.renewLease;
    if (renew === undefined || machine.kubelet === 'silent' || machine.vanished) return;
    renew(machine, machine.kubelet === 'dies' ? DYING_LEASE_SECONDS : SIM_LEASE_SECONDS, KUBELET_AHEAD_MS);
  }

  /** The version report, retried as the daemon retries it, until written or the Node is gone. */
  private async reportVersion(machine: FleetMachine, version: string): Promise<void> {
    const body = { metadata: { annotations: { 'agent-upgrade.dev/agent-version': version } } };
    for (let attempt = 1; attempt <= ATTEMPTS_MAX; attempt += 1) {
      if ((await this.send(machine, 'PATCH', `/api/v1/nodes/${machine.name}`, body)) !== 'retry') return;
      await this.sleepOnGrid(RETRY_MS);
    }
  }

  private sleepOnGrid(ms: number): Promise<void> {
    const { clock, timings } = this.o;
    const atMs = Math.ceil((clock.nowMs() + ms) / timings.tickMs) * timings.tickMs;
    return clock.sleep(atMs - clock.nowMs());
  }

  /**
   * The daemon's status write: read (from its watch), patch with that resourceVersion, again on
   * 409. `gone`: the operation (or the machine) is no more; `refused`: out of attempts.
   */
  private async writeStatus(
    machine: FleetMachine,
    name: string,
    patch: (operation: MachineOperationView, nowIso: string) => object,
  ): Promise<'written' | 'gone' | 'refused'> {
    for (let attempt = 1; attempt <= ATTEMPTS_MAX; attempt += 1) {
      const operation = this.operations.get(name);
      if (operation === undefined || machine.vanished) return 'gone';
      const body = patch(operation, new Date(this.o.clock.nowMs()).toISOString());
      const answer = await this.send(machine, 'PATCH', `${MACHINE_OPERATIONS_PATH}/${name}/status`, body);
      if (answer !== 'retry') return answer;
      await this.sleepOnGrid(RETRY_MS);
    }
    return 'refused';
  }

  private async send(
    machine: FleetMachine,
    method: 'PATCH',
    path: string,
    body: object,
  ): Promise<'written' | 'gone' | 'retry'> {
    if (machine.vanished) return 'gone';
    this.pendingWrites += 1;
    try {
      const answer = (await this.o.http.call(method, path, {
        body,
        contentType: 'application/merge-patch+json',
        query: { fieldManager: 'agent-upgrade' },
      })) as { metadata?: { resourceVersion?: unknown } } | null;
      const updated = readMachineOperation(answer);
      if (updated !== null) this.operations.set(updated.name, updated);
      return 'written';
    } catch (error) {
      if (error instanceof ClusterError && error.status === 404) return 'gone';
      return 'retry';
    } finally {
      this.pendingWrites -= 1;
    }
  }
}

function terminalOf(outcome: Exclude<DaemonOutcome, 'hang'>): TerminalStatus {
  if (outcome === 'Succeeded') return { phase: 'Complete', reason: 'Succeeded', message: 'upgraded' };
  return { phase: 'Failed', reason: outcome, message: `simulated ${outcome}` };
}

function hashOf(text: string): number {
  let hash = 2166136261;
  for (let index = 0; index < text.length; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), 16777619);
  return hash >>> 0;
}
