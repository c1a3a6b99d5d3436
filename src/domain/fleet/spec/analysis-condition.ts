/**
 * The success condition of an analysis metric: a small expression over the query's result, parsed
 * once and evaluated without `eval`. The result is the list of the sample values an instant query
 * returned (a scalar is a list of one):
 *
 *     condition  = or
 *     or         = and { "||" and }
 *     and        = unary { "&&" unary }
 *     unary      = "!" unary | "(" condition ")" | comparison
 *     comparison = operand ( "<" | "<=" | ">" | ">=" | "==" | "!=" ) operand
 *     operand    = number | "result" "[" index "]" | "len(result)" | "result"
 *
 * A number is decimal (`0.95`, `-1`, `1e-3`); `result` alone is `result[0]`. So `result[0] >=
 * 0.95`, `result < 5 && len(result) == 1` and `!(result[0] > 100)` are conditions. Comparisons
 * with NaN are false, as in PromQL. A result without the indexed element cannot be judged: the
 * measurement is an error, not a failure.
 */

export type Comparator = '<' | '<=' | '>' | '>=' | '==' | '!=';

export type Operand =
  | { readonly kind: 'number'; readonly value: number }
  | { readonly kind: 'element'; readonly index: number }
  | { readonly kind: 'length' };

export type Condition =
  | { readonly kind: 'compare'; readonly left: Operand; readonly op: Comparator; readonly right: Operand }
  | { readonly kind: 'not'; readonly operand: Condition }
  | { readonly kind: 'and' | 'or'; readonly left: Condition; readonly right: Condition };

export type ConditionParse =
  { readonly ok: true; readonly condition: Condition } | { readonly ok: false; readonly why: string };

export type ConditionValue =
  { readonly ok: true; readonly holds: boolean } | { readonly ok: false; readonly why: string };

export const CONDITION_MAX_LENGTH = 256;
const NESTING_MAX = 16;
const TOKEN_SOURCE = String.raw`\s*(\|\||&&|<=|>=|==|!=|<|>|!|\(|\)|\[|\]|len\(result\)|result|-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)`;

export function parseCondition(text: string): ConditionParse {
  if (text.trim() === '' || text.length > CONDITION_MAX_LENGTH)
    return { ok: false, why: `must be 1 to ${CONDITION_MAX_LENGTH} characters` };
  const tokens: string[] = [];
  const token = new RegExp(TOKEN_SOURCE, 'y');
  while (token.lastIndex < text.length) {
    const at = token.lastIndex;
    const match = token.exec(text);
    if (match === null) {
      if (text.slice(at).trim() === '') break;
      return { ok: false, why: `unexpected text at character ${at + 1}` };
    }
    tokens.push(match[1] as string);
  }
  try {
    const parser = new Parser(tokens);
    const condition = parser.condition(0);
    if (!parser.done()) return { ok: false, why: `unexpected "${parser.peek()}"` };
    return { ok: true, condition };
  } catch (error) {
    if (error instanceof SyntaxProblem) return { ok: false, why: error.why };
    throw error;
  }
}

export function evaluateCondition(condition: Condition, result: readonly number[]): ConditionValue {
  switch (condition.kind) {
    case 'not': {
      const inner = evaluateCondition(condition.operand, result);
      return inner.ok ? { ok: true, holds: !inner.holds } : inner;
    }
    case 'and':
    case 'or': {
      const left = evaluateCondition(condition.left, result);
      if (!left.ok) return left;
      if (condition.kind === 'and' ? !left.holds : left.holds) return left;
      return evaluateCondition(condition.right, result);
    }
    case 'compare': {
      const left = valueOf(condition.left, result);
      const right = valueOf(condition.right, result);
      if (left === null || right === null) return { ok: false, why: `the result has ${result.length} value(s)` };
      return { ok: true, holds: compare(left, condition.op, right) };
    }
  }
}

function valueOf(operand: Operand, result: readonly number[]): number | null {
  if (operand.kind === 'number') return operand.value;
  if (operand.kind === 'length') return result.length;
  return result[operand.index] ?? null;
}

function compare(left: number, op: Comparator, right: number): boolean {
  switch (op) {
    case '<':
      return left < right;
    case '<=':
      return left <= right;
    case '>':
      return left > right;
    case '>=':
      return left >= right;
    case '==':
      return left === right;
    case '!=':
      return left !== right;
  }
}

class SyntaxProblem {
  constructor(readonly why: string) {}
}

const COMPARATORS: readonly string[] = ['<', '<=', '>', '>=', '==', '!='];

/** Recursive descent over the tokens; `depth` bounds the nesting, so no input can exhaust the stack. */
class Parser {
  private at = 0;

  constructor(private readonly tokens: readonly string[]) {}

  done(): boolean {
    return this.at >= this.tokens.length;
  }

  peek(): string {
    return this.tokens[this.at] ?? 'the end';
  }

  condition(depth: number): Condition {
    if (depth > NESTING_MAX) throw new SyntaxProblem(`nested deeper than ${NESTING_MAX}`);
    let left = this.conjunction(depth);
    while (this.peek() === '||') {
      this.at += 1;
      left = { kind: 'or', left, right: this.conjunction(depth) };
    }
    return left;
  }

  private conjunction(depth: number): Condition {
    let left = this.unary(depth);
    while (this.peek() === '&&') {
      this.at += 1;
      left = { kind: 'and', left, right: this.unary(depth) };
    }
    return left;
  }

  private unary(depth: number): Condition {
    const token = this.peek();
    if (token === '!') {
      this.at += 1;
      return { kind: 'not', operand: this.unary(depth + 1) };
    }
    if (token === '(') {
      this.at += 1;
      const inner = this.condition(depth + 1);
      this.expect(')');
      return inner;
    }
    const left = this.operand();
    const op = this.peek();
    if (!COMPARATORS.includes(op)) throw new SyntaxProblem(`expected a comparison after an operand, found "${op}"`);
    this.at += 1;
    return { kind: 'compare', left, op: op as Comparator, right: this.operand() };
  }

  private operand(): Operand {
    const token = this.peek();
    this.at += 1;
    if (token === 'len(result)') return { kind: 'length' };
    if (token === 'result') {
      if (this.peek() !== '[') return { kind: 'element', index: 0 };
      this.at += 1;
      const index = this.peek();
      if (!/^\d{1,4}$/.test(index)) throw new SyntaxProblem('an index must be a whole number from 0 to 9999');
      this.at += 1;
      this.expect(']');
      return { kind: 'element', index: Number(index) };
    }
    const value = Number(token);
    if (/^-?[\d.]/.test(token) && Number.isFinite(value)) return { kind: 'number', value };
    throw new SyntaxProblem(`expected a number, result[i] or len(result), found "${token}"`);
  }

  private expect(token: string): void {
    if (this.peek() !== token) throw new SyntaxProblem(`expected "${token}", found "${this.peek()}"`);
    this.at += 1;
  }
}
