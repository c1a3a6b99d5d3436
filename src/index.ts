/**
 * agent-upgrade as a library: the use cases over a configuration, with any port replaceable by
 * the embedder's own adapter (see docs/embedding.md).
 */
export { Upgrader } from './app/node/upgrader.js';
export { createUpgrader, type UpgraderOptions } from './app/node/composition/create-upgrader.js';
export { loadConfig, type ConfigSource } from './app/node/config/load-config.js';
export { parseConfigText, parseConfigValue } from './app/node/config/parse-config.js';
export { FLEX_PROFILE, agentProfile } from './app/node/config/profiles.js';
export type { ProfileName, UpgraderConfig } from './app/node/config/upgrader-config.js';
export type { PortOverrides } from './app/node/composition/port-overrides.js';
export type { HostIdentity } from './app/node/host-identity.js';
export type { MigrationReport } from './app/node/layout/layout-engine.js';
export type { RollbackOutcome, RollbackRequest } from './app/node/activation/rollback-to-last-good.js';
export type { StatusReport } from './app/node/status/read-status.js';
export type { ManagedSession, ManagedSessionOptions, StartOutcome } from './app/node/managed/managed-session.js';
export type { HandleOutcome } from './app/node/managed/agent-upgrade-handler.js';
export type { DaemonExit } from './app/node/daemon/run-daemon.js';
export type { ActivationReport, ActivationResult, PreflightReport } from './app/node/activation/activation-report.js';
export type { HealthObserver, HealthProgress } from './app/node/health/health-progress.js';
export { ERROR_CODES, ExitCode, type ErrorCode } from './domain/common/error-codes.js';
export type { Failure, Result } from './domain/common/failure.js';
export {
  ArtifactError,
  TrustError,
  ClusterError,
  ContainerError,
  FileSystemError,
  LockError,
  PortError,
  ServiceError,
} from './domain/common/port-errors.js';
export { RedactedUrl } from './domain/common/redacted-url.js';
export type * from './ports/ports.js';
export { AGENT_UPGRADE_VERSION } from './package-version.js';
