// The subset of CEL the CRD's x-kubernetes-validations use, so the fake evaluates the very rules
// the YAML carries. A rule outside the subset is refused when the CRD is loaded (never skipped):
// a new rule in deploy/ then fails the fake loudly instead of letting it accept what a real
// server refuses.
//
// Supported: `self` with field selection (`self.a.b`), `has(self.a.b)`, string, integer and
// boolean literals, `!`, `==`, `!=`, `&&`, `||` and parentheses.

import { deepEqual, isJsonObject, type JsonValue } from './json.js';

/** A compiled rule: true when `self` satisfies it. */
export type CelRule = (self: JsonValue) => boolean;

type Value = JsonValue | undefined;
type Node = (self: JsonValue) => Value;

const TOKEN = /\s*(has\(|&&|\|\||==|!=|[!().]|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|-?\d+|[A-Za-z_][A-Za-z0-9_]*)/y;

function tokenize(rule: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < rule.length) {
    if (/^\s*$/.test(rule.slice(TOKEN.lastIndex))) break;
    const match = TOKEN.exec(rule);
    if (match === null) throw unsupported(rule, `at offset ${TOKEN.lastIndex}`);
    tokens.push(match[1] ?? '');
  }
  return tokens;
}

function unsupported(rule: string, why: string): Error {
  return new Error(`the fake API server cannot evaluate the CRD rule ${JSON.stringify(rule)} (${why})`);
}

/** Recursive descent over the token list; every method returns an evaluator. */
class Parser {
  private at = 0;

  constructor(
    private readonly rule: string,
    private readonly tokens: readonly string[],
  ) {}

  parse(): Node {
    const node = this.or();
    if (this.at !== this.tokens.length) throw unsupported(this.rule, `unexpected ${this.tokens[this.at]}`);
    return node;
  }

  private peek(): string | undefined {
    return this.tokens[this.at];
  }

  private expect(token: string): void {
    if (this.tokens[this.at] !== token) throw unsupported(this.rule, `expected ${token}`);
    this.at += 1;
  }

  private or(): Node {
    let left = this.and();
    while (this.peek() === '||') {
      this.at += 1;
      const [a, b] = [left, this.and()];
      left = (self) => a(self) === true || b(self) === true;
    }
    return left;
  }

  private and(): Node {
    let left = this.equality();
    while (this.peek() === '&&') {
      this.at += 1;
      const [a, b] = [left, this.equality()];
      left = (self) => a(self) === true && b(self) === true;
    }
    return left;
  }

  private equality(): Node {
    const left = this.unary();
    const op = this.peek();
    if (op !== '==' && op !== '!=') return left;
    this.at += 1;
    const right = this.unary();
    return (self) => deepEqual(left(self), right(self)) === (op === '==');
  }

  private unary(): Node {
    if (this.peek() !== '!') return this.primary();
    this.at += 1;
    const operand = this.unary();
    return (self) => operand(self) !== true;
  }

  private primary(): Node {
    const token = this.peek();
    this.at += 1;
    if (token === '(') {
      const inner = this.or();
      this.expect(')');
      return inner;
    }
    if (token === 'has(') {
      const path = this.selection();
      if (path.length === 0) throw unsupported(this.rule, 'has() needs a field');
      this.expect(')');
      return (self) => lookup(self, path) !== undefined;
    }
    if (token === 'self') {
      this.at -= 1;
      const path = this.selection();
      return (self) => lookup(self, path);
    }
    if (token === 'true' || token === 'false') return () => token === 'true';
    if (token !== undefined && /^-?\d+$/.test(token)) return () => Number(token);
    if (token !== undefined && /^["']/.test(token)) return () => token.slice(1, -1).replace(/\\(.)/g, '$1');
    throw unsupported(this.rule, `unexpected ${token ?? 'end'}`);
  }

  /** `self.a.b` as ['a', 'b']. */
  private selection(): string[] {
    this.expect('self');
    const path: string[] = [];
    while (this.peek() === '.') {
      this.at += 1;
      const name = this.peek();
      if (name === undefined || !/^[A-Za-z_]\w*$/.test(name)) throw unsupported(this.rule, 'expected a field name');
      path.push(name);
      this.at += 1;
    }
    return path;
  }
}

function lookup(self: JsonValue, path: readonly string[]): Value {
  let current: Value = self;
  for (const key of path) current = isJsonObject(current) ? current[key] : undefined;
  return current;
}

/** Compiles `rule`, or throws naming the rule when it leaves the supported subset. */
export function compileCel(rule: string): CelRule {
  const node = new Parser(rule, tokenize(rule)).parse();
  return (self) => node(self) === true;
}
