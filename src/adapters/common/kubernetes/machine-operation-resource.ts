/**
 * Where MachineOperations live in the API (the daemon reads and patches them; the controller
 * creates them) and the kind this project handles.
 */
export const MACHINE_OPERATION_GROUP = 'unbounded-cloud.io';
export const MACHINE_OPERATION_VERSION = 'v1alpha3';
export const MACHINE_OPERATION_PLURAL = 'machineoperations';
export const MACHINE_OPERATIONS_PATH = `/apis/${MACHINE_OPERATION_GROUP}/${MACHINE_OPERATION_VERSION}/${MACHINE_OPERATION_PLURAL}`;
export const AGENT_UPGRADE = 'AgentUpgrade';
