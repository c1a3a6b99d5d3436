/** Who this process is on the host; read once at the edge so the app stays testable. */
export interface HostIdentity {
  readonly euid: number;
  readonly pid: number;
  readonly command: string;
}
