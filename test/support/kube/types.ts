// The object shapes the fake stores and hands to tests. Kept deliberately loose below `spec` and
// `status` (plain JSON) because the fake stores whatever the client writes there, as a real
// API server with a permissive schema would.

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
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: JsonObject;
  status?: JsonObject;
}

export interface Node {
  apiVersion: 'v1';
  kind: 'Node';
  metadata: ObjectMeta;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
