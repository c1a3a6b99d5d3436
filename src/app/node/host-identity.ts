/** Who this process is on the host; read once at the edge so the app stays testable. */
import type { HostArchitecture } from '../../domain/node/artifact/archive-rules.js';

export interface HostIdentity {
  readonly euid: number;
  /** The release architecture of this host, or `null` when releases are not built for it. */
  readonly arch: HostArchitecture | null;
  readonly pid: number;
  readonly command: string;
  /**
   * How the recovery script runs this upgrader again (sidecar mode): its executable and the
   * configuration file it was started with. Absent for embedders: `agent-upgrade` on PATH, the
   * default configuration.
   */
  readonly invocation?: { readonly executable: string; readonly configPath: string | null };
}
