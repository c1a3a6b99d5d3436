// The object shapes the fake stores and hands to tests. Plain JSON below `spec` and `status`: what
// may be stored there is decided by the CRD's schema (crd.ts, schema.ts), not by these types.

import type { JsonObject } from './json.js';

export const GROUP = 'unbounded-cloud.io';
export const VERSION = 'v1alpha3';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'MachineOperation';
export const LIST_KIND = 'MachineOperationList';
export const PLURAL = 'machineoperations';
/** `<plural>.<group>`, the name kube-apiserver uses for the resource in error messages. */
export const QUALIFIED_RESOURCE = `${PLURAL}.${GROUP}`;

export interface ObjectMeta {
  name: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  /** Set by a DELETE while finalizers remain; the object stays until the last one is removed. */
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
}

export interface MachineOperation {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: JsonObject;
  status?: JsonObject;
}

/** What a test passes to `create`: server-assigned metadata may be omitted. */
export interface MachineOperationInput {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
  };
  spec?: JsonObject;
  status?: JsonObject;
}

export interface Node {
  apiVersion: 'v1';
  kind: 'Node';
  metadata: ObjectMeta;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
