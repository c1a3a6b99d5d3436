import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import * as tar from 'tar-stream';
import type { DemoBehaviour } from './demo-agent-elf.js';

export interface DemoRelease {
  readonly version: string;
  /** Its path in the signed repository, below the targets URL. */
  readonly targetPath: string;
  readonly archive: Buffer;
  readonly url: string;
  readonly sha256: string;
  readonly binarySha256: string;
  readonly behaviour: DemoBehaviour;
}

/** A release archive as the upgrader expects it: gzip of a tar with exactly one member. */
export async function releaseArchive(member: string, binary: Uint8Array): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on('data', (chunk: unknown) => chunks.push(chunk as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    pack.on('end', () => resolve());
    pack.on('error', reject);
  });
  pack.entry({ name: member, mode: 0o755, size: binary.length, mtime: new Date(0) }, Buffer.from(binary));
  pack.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}

/** Serves release archives and signed metadata over loopback HTTP for the demo; nothing else is answered. */
export class DemoReleaseServer {
  private readonly files = new Map<string, Buffer>();

  private constructor(private readonly server: Server) {
    server.on('request', (request, response) => {
      const body = this.files.get(request.url ?? '');
      if (body === undefined) {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length }).end(body);
    });
  }

  static async start(): Promise<DemoReleaseServer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new DemoReleaseServer(server);
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The base URL of the signed targets: a release's URL below it names its target path. */
  get targetsUrl(): string {
    return `${this.origin}/targets/`;
  }

  get metadataUrl(): string {
    return `${this.origin}/metadata/`;
  }

  async publish(member: string, version: string, binary: Uint8Array, behaviour: DemoBehaviour): Promise<DemoRelease> {
    const archive = await releaseArchive(member, binary);
    const targetPath = `releases/${version}/agent.tar.gz`;
    this.files.set(`/targets/${targetPath}`, archive);
    return {
      version,
      targetPath,
      archive,
      url: `${this.targetsUrl}${targetPath}`,
      sha256: sha256(archive),
      binarySha256: sha256(binary),
      behaviour,
    };
  }

  /** Puts metadata files under the metadata URL. */
  serveMetadata(files: ReadonlyMap<string, Buffer>): void {
    for (const [name, body] of files) this.files.set(`/metadata/${name}`, body);
  }

  /** What someone with write access to the release host does: other bytes at a release's URL. */
  swap(release: DemoRelease, body: Buffer): void {
    this.files.set(`/targets/${release.targetPath}`, body);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
