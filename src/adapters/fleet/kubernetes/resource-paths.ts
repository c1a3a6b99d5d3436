import { MACHINE_OPERATIONS_PATH } from '../../common/kubernetes/machine-operation-resource.js';

/** Where the controller's resources live on the API server. */

const GROUP_PATH = '/apis/agent-upgrade.dev/v1alpha1';

export const NODES_PATH = '/api/v1/nodes';
export const RELEASES_PATH = `${GROUP_PATH}/agentreleases`;
export const ROLLOUTS_PATH = `${GROUP_PATH}/agentrollouts`;
export const OPERATIONS_PATH = MACHINE_OPERATIONS_PATH;
/** The kubelets' Leases, one per Node and named after it, in the namespace Kubernetes keeps them in. */
export const NODE_LEASES_PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';

export function leasePath(namespace: string, name?: string): string {
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

export function eventsPath(namespace: string): string {
  return `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`;
}

export function objectPath(collection: string, name: string, subresource?: 'status'): string {
  return `${collection}/${encodeURIComponent(name)}${subresource === undefined ? '' : `/${subresource}`}`;
}
