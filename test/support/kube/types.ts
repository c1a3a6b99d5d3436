// The object shapes the fake stores and hands to tests. Plain JSON below `spec` and `status`: what
// may be stored there is decided by the CRD's schema (crd.ts, schema.ts), not by these types.

import type { JsonObject, JsonValue } from './json.js';

export const GROUP = 'unbounded-cloud.io';
export const VERSION = 'v1alpha3';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'MachineOperation';
export const LIST_KIND = 'MachineOperationList';
export const PLURAL = 'machineoperations';
/** `<plural>.<group>`, the name kube-apiserver uses for the resource in error messages. */
export const QUALIFIED_RESOURCE = `${PLURAL}.${GROUP}`;

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name: string;
  generateName?: string;
  /** Set for namespaced resources (Leases, Events) only. */
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  /** Set by a DELETE while finalizers remain; the object stays until the last one is removed. */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
}

/** Anything the fake stores: an object with ObjectMeta. */
export interface StoredObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** A custom resource (MachineOperation, AgentRelease, AgentRollout): spec and status under its CRD's schema. */
export interface CustomObject extends StoredObject {
  spec?: JsonObject;
  status?: JsonObject;
}

export type MachineOperation = CustomObject;
export type AgentRelease = CustomObject;
export type AgentRollout = CustomObject;

/** What a test passes to `create`: server-assigned metadata may be omitted. */
export interface CustomObjectInput {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
  };
  spec?: JsonObject;
  status?: JsonObject;
}

export type MachineOperationInput = CustomObjectInput;

export interface Node extends StoredObject {
  apiVersion: 'v1';
  kind: 'Node';
}

/** A `coordination.k8s.io/v1` Lease; times are MicroTime (RFC 3339 with six fractional digits). */
export interface Lease extends StoredObject {
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** An `events.k8s.io/v1` Event: its fields sit at the top level, beside metadata. */
export interface KubeEvent extends StoredObject {
  readonly [field: string]: JsonValue | ObjectMeta | undefined;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
