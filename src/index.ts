/**
 * agent-upgrade as a library: the use cases over a configuration, with any port replaceable by
 * the embedder's own adapter (see docs/embedding.md).
 */
export { Upgrader } from './app/upgrader.js';
export { createUpgrader, type UpgraderOptions } from './app/composition/create-upgrader.js';
export { loadConfig, type ConfigSource } from './app/config/load-config.js';
export { parseConfigText, parseConfigValue } from './app/config/parse-config.js';
export { FLEX_PROFILE, type UpgraderConfig } from './app/config/upgrader-config.js';
export type { PortOverrides } from './app/composition/port-overrides.js';
export type { HostIdentity } from './app/host-identity.js';
export type { MigrationReport } from './app/layout/layout-engine.js';
export type { RollbackOutcome } from './app/activation/rollback-to-last-good.js';
export type { StatusReport } from './app/status/read-status.js';
export type { ManagedSession, ManagedSessionOptions, StartOutcome } from './app/managed/managed-session.js';
export type { HandleOutcome } from './app/managed/agent-upgrade-handler.js';
export type { DaemonExit } from './app/daemon/run-daemon.js';
export type { ActivationReport, PreflightReport } from './app/activation/activation-report.js';
export { ERROR_CODES, ExitCode, type ErrorCode } from './domain/error-codes.js';
export type { Failure, Result } from './domain/failure.js';
export {
  ArtifactError,
  ClusterError,
  ContainerError,
  FileSystemError,
  LockError,
  PortError,
  ServiceError,
} from './domain/port-errors.js';
export { RedactedUrl } from './domain/redacted-url.js';
export type * from './ports/index.js';
export { AGENT_UPGRADE_VERSION } from './version.js';
