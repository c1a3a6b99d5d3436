/** Who this process is on the host; read once at the edge so the app stays testable. */
import type { HostArchitecture } from '../domain/archive-rules.js';

export interface HostIdentity {
  readonly euid: number;
  /** The release architecture of this host, or `null` when releases are not built for it. */
  readonly arch: HostArchitecture | null;
  readonly pid: number;
  readonly command: string;
}
