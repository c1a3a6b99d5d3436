/** What a run cost the API server, read from the fake's request log: writes per machine, reads by kind. */
import {
  NODE_LEASES_PATH,
  NODES_PATH,
  OPERATIONS_PATH,
  RELEASES_PATH,
  ROLLOUTS_PATH,
} from '../../../src/adapters/fleet/kubernetes/resource-paths.js';
import type { KubeRequest } from '../../support/kube/fake-apiserver.js';
import type { RunResult } from './fleet-run.js';
import { TOKENS } from './fleet-world.js';

export interface WriteCounts {
  /** The most writes any one machine cost: its creates, its daemon's status patches, its version reports. */
  readonly maxPerMachine: number;
  readonly meanPerMachine: number;
  readonly byKind: Readonly<Record<'create' | 'status' | 'versionReport', number>>;
}

const byToken = (requests: readonly KubeRequest[], token: string): KubeRequest[] =>
  requests.filter((request) => request.headers.authorization === `Bearer ${token}`);

/** Writes attributable to each machine (the controller's per-rollout status writes are not: there are few). */
export function writesPerMachine(run: RunResult): WriteCounts {
  const perMachine = new Map<string, number>();
  const add = (machine: string | undefined): void => {
    if (machine !== undefined) perMachine.set(machine, (perMachine.get(machine) ?? 0) + 1);
  };
  const requests = run.world.fake.requests;
  const creates = byToken(requests, TOKENS.controller).filter((r) => r.method === 'POST' && r.path === OPERATIONS_PATH);
  // A create names no machine in its path; every child of a rollout is one create of its machine.
  for (const child of run.monitor.children.values()) add(child.machine);
  const machineOf = new Map([...run.monitor.children.values()].map((child) => [child.name, child.machine]));
  const daemons = byToken(requests, TOKENS.daemons).filter((r) => r.method === 'PATCH');
  let status = 0;
  let versionReport = 0;
  for (const request of daemons) {
    const operation = /\/machineoperations\/([^/]+)\/status$/.exec(request.path)?.[1];
    if (operation !== undefined) {
      status += 1;
      add(machineOf.get(operation));
    } else if (request.path.startsWith(`${NODES_PATH}/`)) {
      versionReport += 1;
      add(request.path.slice(NODES_PATH.length + 1));
    }
  }
  const counts = [...perMachine.values()];
  return {
    maxPerMachine: Math.max(0, ...counts),
    meanPerMachine: counts.reduce((sum, count) => sum + count, 0) / Math.max(1, run.world.machines.size),
    byKind: { create: creates.length, status, versionReport },
  };
}

export interface ControllerReads {
  /** Reads of the five informed collections, by kind: only `list` and `watch` may appear. */
  readonly informed: Readonly<Record<string, number>>;
  /** The leader election's Lease reads (one per retry period). */
  readonly leaseGets: number;
  /** Requests by HTTP method, for the report. */
  readonly byMethod: Readonly<Record<string, number>>;
}

const INFORMED = [NODES_PATH, RELEASES_PATH, ROLLOUTS_PATH, OPERATIONS_PATH, NODE_LEASES_PATH];

export function controllerReads(run: RunResult): ControllerReads {
  const informed: Record<string, number> = {};
  const byMethod: Record<string, number> = {};
  let leaseGets = 0;
  for (const request of byToken(run.world.fake.requests, TOKENS.controller)) {
    byMethod[request.method] = (byMethod[request.method] ?? 0) + 1;
    if (request.method !== 'GET') continue;
    if (request.path.includes('/leases/')) {
      leaseGets += 1;
      continue;
    }
    const watch = request.query['watch'] === 'true' || request.query['watch'] === '1';
    const kind = INFORMED.includes(request.path) ? (watch ? 'watch' : 'list') : 'get';
    informed[kind] = (informed[kind] ?? 0) + 1;
  }
  return { informed, leaseGets, byMethod };
}
