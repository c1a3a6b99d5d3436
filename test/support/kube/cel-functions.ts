// The CEL functions the fake's evaluator (cel.ts) knows, with their arities: a global `name` or a
// member `.name` call. Anything else is refused when the CRD is loaded.

import { CelError, CelType, CelUint, type CelValue, celSize, int, requireString, typeName } from './cel-values.js';

/** `name` (global) or `.name` (member) to the argument counts it takes. */
export const FUNCTIONS: ReadonlyMap<string, readonly number[]> = new Map([
  ['size', [1]],
  ['.size', [0]],
  ['type', [1]],
  ['int', [1]],
  ['double', [1]],
  ['string', [1]],
  ['.matches', [1]],
  ['.startsWith', [1]],
  ['.endsWith', [1]],
  ['.contains', [1]],
]);

const regexCache = new Map<string, RegExp>();

/**
 * RE2 (which CEL uses) has no lookarounds and no backreferences, and spells named groups and
 * flags differently; such a pattern is refused rather than given JavaScript's meaning.
 */
export function regexFor(pattern: string, refuse: (why: string) => Error): RegExp {
  const cached = regexCache.get(pattern);
  if (cached !== undefined) return cached;
  if (/\(\?(?!:)|\\[1-9]|\\k</.test(pattern)) throw refuse(`the regular expression ${JSON.stringify(pattern)}`);
  let compiled: RegExp;
  try {
    compiled = new RegExp(pattern, 'u');
  } catch {
    throw refuse(`the regular expression ${JSON.stringify(pattern)} does not compile`);
  }
  regexCache.set(pattern, compiled);
  return compiled;
}

function toInt(value: CelValue): bigint {
  if (typeof value === 'bigint') return value;
  if (value instanceof CelUint) return int(value.value);
  if (typeof value === 'number' && Number.isFinite(value)) return int(BigInt(Math.trunc(value)));
  if (typeof value === 'string' && /^[+-]?\d+$/.test(value)) return int(BigInt(value));
  throw new CelError(`no such overload: int(${typeName(value)})`);
}

function toDouble(value: CelValue): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof CelUint) return Number(value.value);
  if (typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))) return Number(value);
  throw new CelError(`no such overload: double(${typeName(value)})`);
}

function toText(value: CelValue): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return String(value);
  if (value instanceof CelUint) return String(value.value);
  throw new CelError(`no such overload: string(${typeName(value)})`);
}

function member(name: string, target: CelValue, args: readonly CelValue[]): CelValue {
  if (name === 'size') return celSize(target);
  const text = requireString(target);
  const argument = requireString(args[0] ?? null);
  if (name === 'matches') return regexFor(argument, (why) => new CelError(why)).test(text);
  if (name === 'startsWith') return text.startsWith(argument);
  if (name === 'endsWith') return text.endsWith(argument);
  return text.includes(argument);
}

/** Calls a function the compile step admitted (FUNCTIONS), on evaluated arguments. */
export function callFunction(name: string, target: CelValue | undefined, args: readonly CelValue[]): CelValue {
  if (target !== undefined) return member(name, target, args);
  const [argument = null] = args;
  if (name === 'size') return celSize(argument);
  if (name === 'type') return new CelType(typeName(argument));
  if (name === 'int') return toInt(argument);
  if (name === 'double') return toDouble(argument);
  if (name === 'string') return toText(argument);
  throw new CelError(`no such function ${name}`);
}
