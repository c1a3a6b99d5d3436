/**
 * A digest of the machines a wave has dispatched and still accounts for, from which the ones that
 * went missing since it was written are recovered exactly, up to DIGEST_ORDER of them at a time,
 * whatever else changed in the fleet meanwhile. A machine enters as the 48-bit hash that names
 * its operation (`<rollout>-<hash>`); the digest is the number of machines and the first
 * DIGEST_ORDER power sums of those hashes, modulo the prime 2^61 − 1. Subtracting the digest of
 * the machines still known leaves the power sums of the missing ones alone; Newton's identities
 * turn them into the polynomial whose roots they are, so a machine is missing exactly when its
 * hash is a root (set reconciliation by power sums). A few hundred bytes stand for any number of
 * machines, which a list of names could not at 10,000 machines.
 */

const PRIME = (1n << 61n) - 1n;
/** How many machines can go missing between two reconciles and still be named by the digest. */
export const DIGEST_ORDER = 16;

export interface LossDigest {
  readonly count: number;
  /** `sums[j]` is the sum of every element to the power j + 1, modulo PRIME. */
  readonly sums: readonly bigint[];
}

export const EMPTY_DIGEST: LossDigest = { count: 0, sums: Array.from({ length: DIGEST_ORDER }, () => 0n) };

const mod = (value: bigint): bigint => ((value % PRIME) + PRIME) % PRIME;

/** Plus one: a hash of zero would add nothing to any power sum. */
const element = (hash: string): bigint => BigInt(`0x${hash}`) + 1n;

function power(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let factor = mod(base);
  for (let rest = exponent; rest > 0n; rest >>= 1n) {
    if ((rest & 1n) === 1n) result = (result * factor) % PRIME;
    factor = (factor * factor) % PRIME;
  }
  return result;
}

/** 1/m for the m of Newton's identities (Fermat: m^(p−2)). */
const INVERSES = Array.from({ length: DIGEST_ORDER + 1 }, (_, m) => (m === 0 ? 0n : power(BigInt(m), PRIME - 2n)));

export function digestOf(hashes: Iterable<string>): LossDigest {
  const sums = Array.from({ length: DIGEST_ORDER }, () => 0n);
  let count = 0;
  for (const hash of hashes) {
    const x = element(hash);
    let term = 1n;
    for (let j = 0; j < DIGEST_ORDER; j += 1) {
      term = (term * x) % PRIME;
      sums[j] = ((sums[j] as bigint) + term) % PRIME;
    }
    count += 1;
  }
  return { count, sums };
}

/** `a + b` or `a − b` as multisets. */
export function combine(a: LossDigest, b: LossDigest, sign: 1 | -1): LossDigest {
  return {
    count: a.count + sign * b.count,
    sums: a.sums.map((sum, j) => mod(sum + BigInt(sign) * (b.sums[j] as bigint))),
  };
}

/** `<count>:<sum 1>.<sum 2>…`, the sums in hex. */
export function encodeDigest(digest: LossDigest): string {
  return `${digest.count}:${digest.sums.map((sum) => sum.toString(16)).join('.')}`;
}

export function decodeDigest(text: unknown): LossDigest | null {
  if (typeof text !== 'string') return null;
  const match = /^(\d{1,9}):([0-9a-f]{1,16}(?:\.[0-9a-f]{1,16})*)$/.exec(text);
  const sums = match?.[2]?.split('.').map((hex) => BigInt(`0x${hex}`)) ?? [];
  if (match === null || sums.length !== DIGEST_ORDER || sums.some((sum) => sum >= PRIME)) return null;
  return { count: Number(match[1]), sums };
}

/**
 * The candidates whose hashes the digest holds, when it holds between 0 and DIGEST_ORDER machines;
 * `null` when it holds more (or a negative count: it was not written from a superset of what is
 * subtracted) or when more candidates than its count are roots. Machines it holds that are not
 * among the candidates are not named: only their number is known (`count` less the answer).
 */
export function membersAmong(digest: LossDigest, candidates: Iterable<string>): string[] | null {
  const n = digest.count;
  if (n < 0 || n > DIGEST_ORDER) return null;
  if (n === 0) return [];
  // Newton's identities: e_m = (1/m) Σ_{i=1..m} (−1)^(i−1) e_(m−i) p_i.
  const e: bigint[] = [1n];
  for (let m = 1; m <= n; m += 1) {
    let total = 0n;
    for (let i = 1; i <= m; i += 1) {
      const term = ((e[m - i] as bigint) * (digest.sums[i - 1] as bigint)) % PRIME;
      total = i % 2 === 1 ? total + term : total - term;
    }
    e.push(mod(mod(total) * (INVERSES[m] as bigint)));
  }
  const found: string[] = [];
  for (const hash of candidates) {
    // Horner over Π(x − root) = Σ_m (−1)^m e_m x^(n−m).
    const x = element(hash);
    let value = 1n;
    for (let m = 1; m <= n; m += 1) value = mod(value * x + (m % 2 === 1 ? -(e[m] as bigint) : (e[m] as bigint)));
    if (value === 0n) found.push(hash);
  }
  return found.length <= n ? found : null;
}
