/**
 * The splitmix64 finalizer. FNV-1a alone spreads the last characters of a string poorly into its
 * high bits, so `node-17` and `node-18` would sit next to each other in the rollout order; the
 * finalizer makes every output bit depend on every input bit. The value is kept in four 16-bit
 * limbs (low first) so that every intermediate is an exact double; it runs twice per machine per
 * reconcile, hence plain locals and no arrays.
 */
import { fnv1a64Limbs, hex4 } from './fnv1a64.js';

/** FNV-1a then the finalizer: the hash the rollout orders and names machines with. */
export function stableHash64(text: string): string {
  const [a, b, c, d] = fnv1a64Limbs(text);
  return finalize(a, b, c, d);
}

/** The finalizer over 16 hex digits (for tests against a reference). */
export function mix64(hex: string): string {
  const padded = hex.padStart(16, '0');
  const limb = (at: number): number => Number.parseInt(padded.slice(at, at + 4), 16);
  return finalize(limb(12), limb(8), limb(4), limb(0));
}

function finalize(a: number, b: number, c: number, d: number): string {
  // z ^= z >>> 30
  a ^= ((b >>> 14) | (c << 2)) & 0xffff;
  b ^= ((c >>> 14) | (d << 2)) & 0xffff;
  c ^= d >>> 14;
  // z *= 0xbf58476d1ce4e5b9 (limbs e5b9 1ce4 476d bf58)
  let r0 = a * 0xe5b9;
  let r1 = a * 0x1ce4 + b * 0xe5b9 + Math.floor(r0 / 0x10000);
  let r2 = a * 0x476d + b * 0x1ce4 + c * 0xe5b9 + Math.floor(r1 / 0x10000);
  let r3 = a * 0xbf58 + b * 0x476d + c * 0x1ce4 + d * 0xe5b9 + Math.floor(r2 / 0x10000);
  a = r0 % 0x10000;
  b = r1 % 0x10000;
  c = r2 % 0x10000;
  d = r3 % 0x10000;
  // z ^= z >>> 27
  a ^= ((b >>> 11) | (c << 5)) & 0xffff;
  b ^= ((c >>> 11) | (d << 5)) & 0xffff;
  c ^= d >>> 11;
  // z *= 0x94d049bb133111eb (limbs 11eb 1331 49bb 94d0)
  r0 = a * 0x11eb;
  r1 = a * 0x1331 + b * 0x11eb + Math.floor(r0 / 0x10000);
  r2 = a * 0x49bb + b * 0x1331 + c * 0x11eb + Math.floor(r1 / 0x10000);
  r3 = a * 0x94d0 + b * 0x49bb + c * 0x1331 + d * 0x11eb + Math.floor(r2 / 0x10000);
  a = r0 % 0x10000;
  b = r1 % 0x10000;
  c = r2 % 0x10000;
  d = r3 % 0x10000;
  // z ^= z >>> 31
  a ^= ((b >>> 15) | (c << 1)) & 0xffff;
  b ^= ((c >>> 15) | (d << 1)) & 0xffff;
  c ^= d >>> 15;
  return hex4(d) + hex4(c) + hex4(b) + hex4(a);
}
