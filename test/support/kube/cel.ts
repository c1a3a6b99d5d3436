// The CEL the CRDs' x-kubernetes-validations use, evaluated by the fake so it applies the very
// rules the YAML carries, transition rules (`oldSelf`) included. A rule outside the subset is
// refused when the CRD is loaded (never skipped): a new rule in deploy/ then fails the fake
// loudly instead of letting it accept what a real server refuses.
//
// Supported (cel-parser.ts has the syntax): `self`, `oldSelf`, field selection, `has()`,
// indexing, int/uint/double/string/bool/null literals, list literals, `!`, unary `-`, `&&` and
// `||` (commutative over errors, as CEL's), relations and `in`, `+ - * / %`, `?:`, the macros
// `all`, `exists`, `exists_one`, `map` and `filter`, and the functions `size`, `type`, `int`,
// `double`, `string`, `matches`, `startsWith`, `endsWith` and `contains`, with type names
// (`int`, `string`, …) as values. A runtime error (a missing field, an overload that does not
// exist) fails the rule, as the API server reports it. Not modelled: the cost budget (a rule the
// real server refuses as too expensive is the real-server tests' to find) and RE2's differences
// from JavaScript regular expressions beyond refusing lookarounds and backreferences.

import { CelUnsupported, type Expr, MACROS, parseCel } from './cel-parser.js';
import { callFunction, FUNCTIONS, regexFor } from './cel-functions.js';
import {
  CelError,
  CelList,
  CelMap,
  CelType,
  CelUint,
  type CelValue,
  celCompare,
  celEquals,
  fromJson,
  int,
  requireBool,
  typeName,
} from './cel-values.js';
import type { Schema } from './crd.js';
import type { JsonValue } from './json.js';

export { CelUnsupported } from './cel-parser.js';

/** A compiled rule of one schema node. */
export interface CelRule {
  readonly source: string;
  /** A transition rule: evaluated only on an update, where the old value at the same place exists. */
  readonly usesOldSelf: boolean;
  /** True when the rule holds; false when it does not or when evaluating it fails. */
  check(self: JsonValue, schema: Schema | undefined, oldSelf?: JsonValue): boolean;
}

const TYPE_NAMES = new Set(['int', 'uint', 'double', 'bool', 'string', 'bytes', 'list', 'map', 'null_type', 'type']);

interface Scope {
  readonly name: string;
  readonly value: CelValue;
  readonly parent: Scope | undefined;
}

function variable(scope: Scope | undefined, name: string): CelValue {
  for (let at = scope; at !== undefined; at = at.parent) if (at.name === name) return at.value;
  if (TYPE_NAMES.has(name)) return new CelType(name);
  throw new CelError(`undeclared reference to ${name}`);
}

/** `a || b` and `a && b` as CEL has them: a decisive operand wins even when the other one errs. */
function logical(expr: Expr & { kind: 'binary' }, scope: Scope | undefined): CelValue {
  const decisive = expr.op === '||';
  const side = (operand: Expr): boolean | CelError => {
    try {
      return requireBool(evaluate(operand, scope));
    } catch (error) {
      if (error instanceof CelError) return error;
      throw error;
    }
  };
  const left = side(expr.left);
  if (left === decisive) return decisive;
  const right = side(expr.right);
  if (right === decisive) return decisive;
  if (left instanceof CelError) throw left;
  if (right instanceof CelError) throw right;
  return !decisive;
}

function arithmetic(op: string, a: CelValue, b: CelValue): CelValue {
  if (typeof a === 'bigint' && typeof b === 'bigint') {
    if ((op === '/' || op === '%') && b === 0n) throw new CelError(op === '/' ? 'division by zero' : 'modulus by zero');
    if (op === '+') return int(a + b);
    if (op === '-') return int(a - b);
    if (op === '*') return int(a * b);
    return op === '/' ? int(a / b) : a % b;
  }
  if (typeof a === 'number' && typeof b === 'number' && op !== '%') {
    if (op === '+') return a + b;
    if (op === '-') return a - b;
    return op === '*' ? a * b : a / b;
  }
  if (a instanceof CelUint && b instanceof CelUint && op !== '/' && op !== '%' && op !== '*') {
    const value = op === '+' ? a.value + b.value : a.value - b.value;
    if (value < 0n || value >= 2n ** 64n) throw new CelError('unsigned integer overflow');
    return new CelUint(value);
  }
  if (op === '+' && typeof a === 'string' && typeof b === 'string') return a + b;
  if (op === '+' && a instanceof CelList && b instanceof CelList) return new CelList([...a.items, ...b.items], false);
  throw new CelError(`no such overload: ${typeName(a)} ${op} ${typeName(b)}`);
}

function binary(expr: Expr & { kind: 'binary' }, scope: Scope | undefined): CelValue {
  if (expr.op === '||' || expr.op === '&&') return logical(expr, scope);
  const a = evaluate(expr.left, scope);
  const b = evaluate(expr.right, scope);
  if (expr.op === '==') return celEquals(a, b);
  if (expr.op === '!=') return !celEquals(a, b);
  if (expr.op === '<') return celCompare(a, b) < 0;
  if (expr.op === '<=') return celCompare(a, b) <= 0;
  if (expr.op === '>') return celCompare(a, b) > 0;
  if (expr.op === '>=') return celCompare(a, b) >= 0;
  if (expr.op === 'in') {
    if (b instanceof CelList) return b.items.some((item) => celEquals(a, item));
    if (b instanceof CelMap && typeof a === 'string') return b.has(a);
    throw new CelError(`no such overload: ${typeName(a)} in ${typeName(b)}`);
  }
  return arithmetic(expr.op, a, b);
}

function elements(target: CelValue): CelValue[] {
  if (target instanceof CelList) return [...target.items];
  if (target instanceof CelMap) return target.keys();
  throw new CelError(`no such overload: comprehension over ${typeName(target)}`);
}

/** all/exists absorb errors when another element decides; exists_one, map and filter do not. */
function macro(expr: Expr & { kind: 'macro' }, scope: Scope | undefined): CelValue {
  const items = elements(evaluate(expr.target, scope));
  const each = (item: CelValue): CelValue => evaluate(expr.body, { name: expr.variable, value: item, parent: scope });
  if (expr.name === 'map') return new CelList(items.map(each), false);
  if (expr.name === 'filter')
    return new CelList(
      items.filter((item) => requireBool(each(item))),
      false,
    );
  if (expr.name === 'exists_one') return items.filter((item) => requireBool(each(item))).length === 1;
  const decisive = expr.name === 'exists';
  let failure: CelError | undefined;
  for (const item of items) {
    try {
      if (requireBool(each(item)) === decisive) return decisive;
    } catch (error) {
      if (!(error instanceof CelError)) throw error;
      failure ??= error;
    }
  }
  if (failure !== undefined) throw failure;
  return !decisive;
}

function index(operand: CelValue, at: CelValue): CelValue {
  if (operand instanceof CelList) {
    const position = at instanceof CelUint ? at.value : at;
    if (typeof position !== 'bigint') throw new CelError(`no such overload: list[${typeName(at)}]`);
    const item = operand.items[Number(position)];
    if (position < 0n || item === undefined) throw new CelError(`index out of bounds: ${position}`);
    return item;
  }
  if (operand instanceof CelMap && typeof at === 'string') return operand.get(at);
  throw new CelError(`no such overload: ${typeName(operand)}[${typeName(at)}]`);
}

function unary(expr: Expr & { kind: 'unary' }, scope: Scope | undefined): CelValue {
  const operand = evaluate(expr.operand, scope);
  if (expr.op === '!') return !requireBool(operand);
  if (typeof operand === 'bigint') return int(-operand);
  if (typeof operand === 'number') return -operand;
  throw new CelError(`no such overload: -${typeName(operand)}`);
}

function evaluate(expr: Expr, scope: Scope | undefined): CelValue {
  switch (expr.kind) {
    case 'literal':
      return typeof expr.value === 'object' && expr.value !== null ? new CelUint(expr.value.uint) : expr.value;
    case 'ident':
      return variable(scope, expr.name);
    case 'select':
    case 'has': {
      const operand = evaluate(expr.operand, scope);
      if (!(operand instanceof CelMap)) throw new CelError(`no such key: ${expr.field} on ${typeName(operand)}`);
      return expr.kind === 'has' ? operand.has(expr.field) : operand.get(expr.field);
    }
    case 'index':
      return index(evaluate(expr.operand, scope), evaluate(expr.index, scope));
    case 'call': {
      const target = expr.target === undefined ? undefined : evaluate(expr.target, scope);
      return callFunction(
        expr.name,
        target,
        expr.args.map((arg) => evaluate(arg, scope)),
      );
    }
    case 'macro':
      return macro(expr, scope);
    case 'unary':
      return unary(expr, scope);
    case 'binary':
      return binary(expr, scope);
    case 'conditional':
      return evaluate(requireBool(evaluate(expr.test, scope)) ? expr.then : expr.otherwise, scope);
    case 'list':
      return new CelList(
        expr.items.map((item) => evaluate(item, scope)),
        false,
      );
  }
}

/** Every name and function in `expr` must be one the evaluator knows; returns whether it reads oldSelf. */
function check(rule: string, expr: Expr, bound: ReadonlySet<string>): boolean {
  const sub = (child: Expr, names = bound): boolean => check(rule, child, names);
  switch (expr.kind) {
    case 'literal':
      return false;
    case 'ident':
      if (!bound.has(expr.name) && !TYPE_NAMES.has(expr.name))
        throw new CelUnsupported(rule, `unknown name ${expr.name}`);
      return expr.name === 'oldSelf';
    case 'select':
    case 'has':
      return sub(expr.operand);
    case 'index':
      return [sub(expr.operand), sub(expr.index)].includes(true);
    case 'call': {
      const arity = FUNCTIONS.get(`${expr.target === undefined ? '' : '.'}${expr.name}`);
      if (arity === undefined || !arity.includes(expr.args.length))
        throw new CelUnsupported(rule, `the function ${expr.name}/${expr.args.length}`);
      const [pattern] = expr.args;
      if (expr.name === 'matches' && pattern?.kind === 'literal' && typeof pattern.value === 'string')
        regexFor(pattern.value, (why) => new CelUnsupported(rule, why));
      return [...(expr.target === undefined ? [] : [expr.target]), ...expr.args].map((e) => sub(e)).includes(true);
    }
    case 'macro':
      if (!MACROS.has(expr.name)) throw new CelUnsupported(rule, `the macro ${expr.name}`);
      return [sub(expr.target), sub(expr.body, new Set([...bound, expr.variable]))].includes(true);
    case 'unary':
      return sub(expr.operand);
    case 'binary':
      return [sub(expr.left), sub(expr.right)].includes(true);
    case 'conditional':
      return [sub(expr.test), sub(expr.then), sub(expr.otherwise)].includes(true);
    case 'list':
      return expr.items.map((item) => sub(item)).includes(true);
  }
}

/** Compiles `rule`, or throws CelUnsupported naming the rule when it leaves the supported subset. */
export function compileCel(rule: string): CelRule {
  const expr = parseCel(rule);
  const usesOldSelf = check(rule, expr, new Set(['self', 'oldSelf']));
  return {
    source: rule,
    usesOldSelf,
    check(self, schema, oldSelf) {
      let scope: Scope = { name: 'self', value: fromJson(self, schema), parent: undefined };
      if (oldSelf !== undefined) scope = { name: 'oldSelf', value: fromJson(oldSelf, schema), parent: scope };
      try {
        return evaluate(expr, scope) === true;
      } catch (error) {
        if (error instanceof CelError) return false;
        throw error;
      }
    },
  };
}
