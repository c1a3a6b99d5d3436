import { ArtifactError } from '../../../domain/common/port-errors.js';

const BLOCK = 512;
const PAX_BODY_MAX_BYTES = 64 * 1024;
/** PAX records that only describe the file; any record that renames or resizes it is refused. */
const PAX_KEYS_ALLOWED: ReadonlySet<string> = new Set([
  'mtime',
  'atime',
  'ctime',
  'uid',
  'gid',
  'uname',
  'gname',
  'comment',
]);
/** Typeflags whose next header would be re-read with another name, link or size. */
const REWRITING_TYPES: ReadonlySet<string> = new Set(['L', 'K', 'g', 'N']);

/**
 * Checks the raw block structure of the tar stream before tar-stream reads it, and passes the
 * bytes through unchanged. tar-stream is lenient where tar implementations disagree, and such
 * parser differentials let an archive show one member to us and another to `tar`. So this
 * accepts only a strict subset: valid header checksums, size fields of octal digits only, no
 * GNU long-name or global headers, PAX headers that only carry descriptive records, an entry's
 * data complete, and nothing but zero blocks after the end marker.
 */
export async function* strictTarShape(input: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const shape = new TarShape();
  for await (const chunk of input) {
    shape.push(chunk);
    yield chunk;
  }
  shape.finish();
}

class TarShape {
  private pending: Buffer = Buffer.alloc(0);
  /** Data bytes (padded to blocks) still to skip for the current entry. */
  private skipBytes = 0;
  /** When the current entry is a PAX header, its body is collected to be checked. */
  private paxBody: Buffer[] | null = null;
  private paxRemaining = 0;
  private ended = false;

  /** Walks the chunk in place; only a header split across chunks is copied (at most 511 bytes). */
  push(chunk: Uint8Array): void {
    const data = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let offset = 0;
    while (offset < data.length) {
      if (this.skipBytes > 0) {
        const take = Math.min(this.skipBytes, data.length - offset);
        this.collectPax(data.subarray(offset, offset + take));
        this.skipBytes -= take;
        offset += take;
        if (this.skipBytes === 0) this.checkPax();
        continue;
      }
      const need = BLOCK - this.pending.length;
      if (this.pending.length === 0 && data.length - offset >= BLOCK) {
        this.header(data.subarray(offset, offset + BLOCK));
        offset += BLOCK;
        continue;
      }
      const take = Math.min(need, data.length - offset);
      this.pending = Buffer.concat([this.pending, data.subarray(offset, offset + take)]);
      offset += take;
      if (this.pending.length === BLOCK) {
        const block = this.pending;
        this.pending = Buffer.alloc(0);
        this.header(block);
      }
    }
  }

  finish(): void {
    if (this.skipBytes > 0 || this.pending.length > 0)
      throw new ArtifactError('E_TRUNCATED', 'the tar stream ends inside an entry');
  }

  private header(block: Buffer): void {
    if (block.every((byte) => byte === 0)) {
      this.ended = true;
      return;
    }
    if (this.ended) throw format('the tar stream has data after its end marker');
    if (checksumOf(block) !== parseOctal(block.subarray(148, 156), 'checksum'))
      throw format('a tar header checksum is wrong');
    const size = parseOctal(block.subarray(124, 136), 'size');
    const typeflag = String.fromCharCode(block[156] ?? 0);
    if (REWRITING_TYPES.has(typeflag)) throw format('the archive uses GNU long names or global headers');
    const dataBytes = Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === 'x') {
      if (size > PAX_BODY_MAX_BYTES) throw format('a PAX header is too large');
      this.paxBody = [];
      this.paxRemaining = size;
      if (dataBytes === 0) this.checkPax();
    }
    this.skipBytes = dataBytes;
  }

  private collectPax(data: Buffer): void {
    if (this.paxBody === null || this.paxRemaining === 0) return;
    const part = data.subarray(0, this.paxRemaining);
    this.paxBody.push(Buffer.from(part));
    this.paxRemaining -= part.length;
  }

  private checkPax(): void {
    if (this.paxBody === null) return;
    checkPaxRecords(Buffer.concat(this.paxBody));
    this.paxBody = null;
  }
}

/** PAX records are `LENGTH KEY=VALUE\n` with LENGTH counting the whole record; nothing else. */
function checkPaxRecords(body: Buffer): void {
  let offset = 0;
  while (offset < body.length) {
    const space = body.indexOf(0x20, offset);
    const lengthText = space < 0 ? '' : body.subarray(offset, space).toString('latin1');
    if (!/^[1-9]\d{0,5}$/.test(lengthText)) throw format('a PAX record has a malformed length');
    const end = offset + Number(lengthText);
    if (end > body.length || body[end - 1] !== 0x0a) throw format('a PAX record is malformed');
    const record = body.subarray(space + 1, end - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals <= 0) throw format('a PAX record is malformed');
    const key = record.slice(0, equals);
    if (!PAX_KEYS_ALLOWED.has(key)) throw format(`the archive uses the PAX record "${key.slice(0, 32)}"`);
    offset = end;
  }
}

/** Octal digits, optionally padded with spaces and NULs after them; nothing else. */
function parseOctal(field: Buffer, what: string): number {
  const text = field.toString('latin1');
  const match = /^ *([0-7]+)[ \0]*$/.exec(text);
  if (match?.[1] === undefined) throw format(`a tar header ${what} field is malformed`);
  const value = Number.parseInt(match[1], 8);
  if (!Number.isSafeInteger(value)) throw format(`a tar header ${what} field is out of range`);
  return value;
}

function checksumOf(block: Buffer): number {
  let sum = 0;
  for (let index = 0; index < BLOCK; index += 1) sum += index >= 148 && index < 156 ? 0x20 : (block[index] ?? 0);
  return sum;
}

function format(message: string): ArtifactError {
  return new ArtifactError('E_ARCHIVE_FORMAT', message);
}
