import { Readable } from 'node:stream';
import { extract, type Header } from 'tar-stream';
import { describe, expect, it } from 'vitest';
import { tarAttacks } from '../support/archive/index.js';

/**
 * What tar-stream 3.2.2 (the pipeline's parser) reports for the catalogue.
 * These pin the parser differentials the pipeline must defend against itself: where tar-stream
 * says "file" with the right name, only extra checks (pax keys, entry count) can reject.
 */
const MEMBER = 'aks-flex-node-linux-amd64';
const attacks = tarAttacks(MEMBER);

// tar-stream's typings promise a known `type`, but unknown typeflags ('S', 'Z') arrive as null.
interface Seen {
  readonly type: Header['type'] | null;
  readonly name: string;
  readonly pax: unknown;
}

async function view(tar: Uint8Array): Promise<{ entries: Seen[]; error: string | undefined }> {
  const ex = extract();
  const entries: Seen[] = [];
  Readable.from([Buffer.from(tar)]).pipe(ex);
  try {
    for await (const entry of ex) {
      entries.push({ type: entry.header.type, name: entry.header.name, pax: entry.header.pax ?? null });
      entry.resume();
    }
    return { entries, error: undefined };
  } catch (e) {
    return { entries, error: (e as Error).message };
  }
}

describe('tar-stream view of the catalogue', () => {
  it('the dangerous ones look like a plain "file" with the exact member name', async () => {
    const sparseRecords = await view(attacks.paxSparseRecords);
    expect(sparseRecords.entries).toEqual([
      expect.objectContaining({
        type: 'file',
        name: MEMBER,
        pax: expect.objectContaining({ 'GNU.sparse.numblocks': '1' }),
      }),
    ]);
    // GNU tar applies a global `path`; tar-stream ignores it and reports the decoy.
    expect((await view(attacks.paxGlobalPath)).entries.map((e) => e.name)).toEqual(['decoy']);
    // A PAX length prefix pointing past the record is parsed leniently: path gains a newline.
    expect((await view(attacks.paxMalformedLength)).entries[0]?.name).toBe(`${MEMBER}\n`);
    // GNU tar calls a trailing slash a directory; tar-stream calls it a file.
    expect((await view(attacks.trailingSlash)).entries[0]).toMatchObject({ type: 'file', name: `${MEMBER}/` });
    expect((await view(attacks.typeflagNul)).entries[0]?.type).toBe('file');
  });

  it('types it does report distinctly', async () => {
    const first = async (k: keyof typeof attacks) => (await view(attacks[k])).entries[0]?.type;
    expect(await first('symlinkAbsolute')).toBe('symlink');
    expect(await first('hardlinkAbsolute')).toBe('link');
    expect(await first('charDevice')).toBe('character-device');
    expect(await first('blockDevice')).toBe('block-device');
    expect(await first('fifo')).toBe('fifo');
    expect(await first('directory')).toBe('directory');
    expect(await first('contiguous')).toBe('contiguous-file');
    expect(await first('gnuSparse')).toBeNull(); // 'S' is unknown to tar-stream
    expect(await first('unknownType')).toBeNull();
    expect((await view(attacks.paxSparse)).entries[0]?.name).toBe(`GNUSparseFile.0/${MEMBER}`);
  });

  it('errors it raises by itself, and end-of-archive slack it tolerates', async () => {
    for (const k of ['truncated', 'oversizeDeclared'] as const)
      expect((await view(attacks[k])).error).toMatch(/Unexpected end of data/);
    for (const k of ['badChecksum', 'garbageBlock', 'trailingGarbage', 'paxSizeOverride'] as const) {
      expect((await view(attacks[k])).error).toMatch(/Invalid tar header/);
    }
    for (const k of ['oneEndBlock', 'noEndBlocks'] as const) expect((await view(attacks[k])).error).toBeUndefined();
    expect((await view(attacks.duplicate)).entries).toHaveLength(2);
  });
});
