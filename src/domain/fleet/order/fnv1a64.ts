/**
 * 64-bit FNV-1a over the UTF-8 bytes of a string, as 16 lowercase hex digits. It is what orders
 * machines and names child operations, so it must be the same on every platform and in every
 * process: no runtime hashing, and four 16-bit limbs so that every product stays an exact double.
 * It runs for every machine on every reconcile, hence the plain loop.
 */
export function fnv1a64(text: string): string {
  const [h0, h1, h2, h3] = fnv1a64Limbs(text);
  return hex4(h3) + hex4(h2) + hex4(h1) + hex4(h0);
}

/** The hash as four 16-bit limbs, low first. */
export function fnv1a64Limbs(text: string): [number, number, number, number] {
  for (let index = 0; index < text.length; index += 1) {
    if (text.charCodeAt(index) > 0x7f) return limbsOfBytes(utf8(text));
  }
  return limbsOfBytes(text);
}

/** FNV-1a of a string whose char codes are bytes (0–255). */
function limbsOfBytes(bytes: string): [number, number, number, number] {
  // The offset basis 0xcbf29ce484222325, low limb first.
  let h0 = 0x2325;
  let h1 = 0x8422;
  let h2 = 0x9ce4;
  let h3 = 0xcbf2;
  for (let index = 0; index < bytes.length; index += 1) {
    h0 ^= bytes.charCodeAt(index);
    // Multiply by the prime 0x100000001b3 = 2^40 + 0x1b3, modulo 2^64.
    const t0 = h0 * 0x1b3;
    const t1 = h1 * 0x1b3 + (t0 >>> 16);
    const t2 = h2 * 0x1b3 + h0 * 0x100 + (t1 >>> 16);
    const t3 = h3 * 0x1b3 + h1 * 0x100 + (t2 >>> 16);
    h0 = t0 & 0xffff;
    h1 = t1 & 0xffff;
    h2 = t2 & 0xffff;
    h3 = t3 & 0xffff;
  }
  return [h0, h1, h2, h3];
}

const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
export const hex4 = (limb: number): string => (HEX_BYTES[limb >>> 8] as string) + (HEX_BYTES[limb & 0xff] as string);

/** The UTF-8 encoding as a string of byte values. */
function utf8(text: string): string {
  let out = '';
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0;
    const bytes =
      code < 0x80
        ? [code]
        : code < 0x800
          ? [0xc0 | (code >> 6), 0x80 | (code & 0x3f)]
          : code < 0x10000
            ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            : [0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
    out += String.fromCharCode(...bytes);
  }
  return out;
}
