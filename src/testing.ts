/**
 * In-memory adapters for embedders' tests (`agent-upgrade/testing`): a FileSystem that models
 * durability, crashes and faults. Requires the `memfs` package in the embedder's dev dependencies.
 */
export {
  MemoryFileSystem,
  SimulatedCrash,
  type RebootMode,
  type Snapshot,
  type TreeSpec,
} from './adapters/node/memory/memory-file-system.js';
export { NoServiceManager } from './adapters/node/none/none-service-manager.js';
export {
  MemoryServiceManager,
  type AgentBehaviour,
  type MemoryServiceOptions,
  type StartRecord,
} from './adapters/node/memory/memory-service-manager.js';
export { MemoryClock } from './adapters/common/memory/memory-clock.js';
export {
  MemoryContainerRootfs,
  type MemoryContainerRootfsOptions,
} from './adapters/node/memory/memory-container-rootfs.js';
export {
  MemoryOperationStore,
  type ClusterFault,
  type MemoryOperation,
  type NewOperation,
  type PublishViolation,
  type StatusEntry,
} from './adapters/node/memory/memory-operation-store.js';
export {
  MemoryProcessRunner,
  versionOutcome,
  type ScriptedBehaviour,
} from './adapters/node/memory/memory-process-runner.js';
export { MemoryHostLock } from './adapters/node/memory/memory-host-lock.js';
export { MemoryHealthProbe, type MemoryHealthProbeOptions } from './adapters/node/memory/memory-health-probe.js';
/**
 * A platform of port instances for `createUpgrader({ …, platform })`: the production use cases
 * over the memory adapters above (or an embedder's own), as the project's own simulator runs them.
 */
export { memoryPlatform, type Platform } from './app/node/composition/create-container.js';
export type { PlatformPorts } from './app/node/composition/port-overrides.js';
