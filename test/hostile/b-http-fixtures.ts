import { concatBytes, endlessGzip, releaseArchive, sha256Hex, tarHeader } from '../support/archive/index.js';
import type { Behaviour, HostileServer } from '../support/http/hostile-server.js';
import { type Harness, MEMBER, PAYLOAD } from './harness.js';

/** Category B (the HTTP transport lies, stalls, redirects and downgrades): what its files share. */

export const ARCHIVE = releaseArchive(MEMBER, PAYLOAD);
export const DIGEST = sha256Hex(ARCHIVE);
/**
 * A 2 MiB body, twice the default FAST cap of 1 MiB, that is a valid gzip prefix of a valid tar
 * (stored deflate blocks of 'A's after the member's header), so only the size cap can stop it.
 */
export const BIG = takeBytes(
  endlessGzip({ prefix: tarHeader({ name: MEMBER, mode: 0o755, size: 3 * 1024 * 1024 }), fill: 0x41 }),
  2 * 1024 * 1024,
);
/** Binary cap large enough for BIG's member, so the archive cap is what trips. */
export const ROOMY = { maxBinaryBytes: 4 * 1024 * 1024 };

function takeBytes(source: Iterable<Uint8Array>, count: number): Uint8Array {
  const parts: Uint8Array[] = [];
  let have = 0;
  for (const piece of source) {
    parts.push(piece.subarray(0, count - have));
    have += Math.min(piece.length, count - have);
    if (have >= count) break;
  }
  return concatBytes(...parts);
}

/** `serving(path, behaviour, tls)`: a harness server (plain or TLS) answering `path` with `behaviour`. */
export function servingWith(h: Harness): (path: string, behaviour: Behaviour, tls?: boolean) => Promise<HostileServer> {
  return async (path, behaviour, tls = false) => {
    const s = await h.server({ tls });
    s.route(path, behaviour);
    return s;
  };
}
