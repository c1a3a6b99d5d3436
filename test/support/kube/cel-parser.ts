// The syntax of the CEL subset the fake evaluates (cel.ts), parsed into a small tree: CEL's own
// grammar (ternary, ||, &&, relations with `in`, + -, * / %, unary ! and -, member selection,
// indexing, calls, list literals and the comprehension macros) over int, uint, double, string,
// bool and null literals. Map literals, bytes, raw and triple-quoted strings are outside the
// subset: a rule that uses them is refused (never skipped), so the CRD fails to load loudly.

/** A rule outside the subset, or a rule that does not parse. */
export class CelUnsupported extends Error {
  constructor(rule: string, why: string) {
    super(`the fake API server cannot evaluate the CRD rule ${JSON.stringify(rule)} (${why})`);
    this.name = 'CelUnsupported';
  }
}

export type Literal = null | boolean | bigint | number | string | { readonly uint: bigint };

export type Expr =
  | { readonly kind: 'literal'; readonly value: Literal }
  | { readonly kind: 'ident'; readonly name: string }
  | { readonly kind: 'select'; readonly operand: Expr; readonly field: string }
  | { readonly kind: 'has'; readonly operand: Expr; readonly field: string }
  | { readonly kind: 'index'; readonly operand: Expr; readonly index: Expr }
  | { readonly kind: 'call'; readonly name: string; readonly target: Expr | undefined; readonly args: readonly Expr[] }
  | {
      readonly kind: 'macro';
      readonly name: string;
      readonly target: Expr;
      readonly variable: string;
      readonly body: Expr;
    }
  | { readonly kind: 'unary'; readonly op: '!' | '-'; readonly operand: Expr }
  | { readonly kind: 'binary'; readonly op: string; readonly left: Expr; readonly right: Expr }
  | { readonly kind: 'conditional'; readonly test: Expr; readonly then: Expr; readonly otherwise: Expr }
  | { readonly kind: 'list'; readonly items: readonly Expr[] };

export const MACROS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);
const RELATIONS = new Set(['<', '<=', '>', '>=', '==', '!=', 'in']);
const TOKEN =
  /\s*(?:(\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)|(0x[0-9a-fA-F]+|\d+)(u|U)?|("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|([A-Za-z_][A-Za-z0-9_]*)|(&&|\|\||==|!=|<=|>=|[<>!+\-*/%?:()[\]{}.,]))/y;

type Token =
  | { readonly type: 'double'; readonly value: number }
  | { readonly type: 'int'; readonly value: bigint; readonly unsigned: boolean }
  | { readonly type: 'string'; readonly value: string }
  | { readonly type: 'name' | 'op'; readonly value: string };

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  r: '\r',
  t: '\t',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '`': '`',
};

function unquote(rule: string, literal: string): string {
  return literal.slice(1, -1).replace(/\\(.)/g, (_match, escaped: string) => {
    const value = ESCAPES[escaped];
    if (value === undefined) throw new CelUnsupported(rule, `the string escape \\${escaped}`);
    return value;
  });
}

function tokenize(rule: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (let guard = 0; guard <= rule.length; guard += 1) {
    if (/^\s*$/.test(rule.slice(TOKEN.lastIndex))) return tokens;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(rule);
    if (match === null) throw new CelUnsupported(rule, `unexpected text at offset ${at}`);
    const [, double, int, unsigned, string, name, op] = match;
    if (double !== undefined) tokens.push({ type: 'double', value: Number(double) });
    else if (int !== undefined) tokens.push({ type: 'int', value: BigInt(int), unsigned: unsigned !== undefined });
    else if (string !== undefined) tokens.push({ type: 'string', value: unquote(rule, string) });
    else if (name !== undefined) tokens.push({ type: 'name', value: name });
    else tokens.push({ type: 'op', value: op ?? '' });
  }
  return tokens;
}

/** Recursive descent over the tokens, one method per precedence level of CEL's grammar. */
class Parser {
  private at = 0;

  constructor(
    private readonly rule: string,
    private readonly tokens: readonly Token[],
  ) {}

  parse(): Expr {
    const expr = this.expression();
    if (this.at !== this.tokens.length) throw this.unexpected();
    return expr;
  }

  private peekOp(): string | undefined {
    const token = this.tokens[this.at];
    return token?.type === 'op' || token?.type === 'name' ? token.value : undefined;
  }

  private takeOp(op: string): boolean {
    const token = this.tokens[this.at];
    if (token === undefined || token.type !== 'op' || token.value !== op) return false;
    this.at += 1;
    return true;
  }

  private expect(op: string): void {
    if (!this.takeOp(op)) throw new CelUnsupported(this.rule, `expected ${op}`);
  }

  private unexpected(): CelUnsupported {
    const token = this.tokens[this.at];
    return new CelUnsupported(this.rule, `unexpected ${token === undefined ? 'end' : String(token.value)}`);
  }

  private expression(): Expr {
    const test = this.binaryLevel(0);
    if (!this.takeOp('?')) return test;
    const then = this.binaryLevel(0);
    this.expect(':');
    return { kind: 'conditional', test, then, otherwise: this.expression() };
  }

  /** Levels 0-4: ||, &&, relations, + -, * / %; all left-associative. */
  private binaryLevel(level: number): Expr {
    if (level === 5) return this.unary();
    let left = this.binaryLevel(level + 1);
    for (let op = this.peekOp(); op !== undefined && Parser.atLevel(op, level); op = this.peekOp()) {
      this.at += 1;
      left = { kind: 'binary', op, left, right: this.binaryLevel(level + 1) };
    }
    return left;
  }

  private static atLevel(op: string, level: number): boolean {
    if (level === 0) return op === '||';
    if (level === 1) return op === '&&';
    if (level === 2) return RELATIONS.has(op);
    if (level === 3) return op === '+' || op === '-';
    return op === '*' || op === '/' || op === '%';
  }

  private unary(): Expr {
    if (this.takeOp('!')) return { kind: 'unary', op: '!', operand: this.unary() };
    if (this.takeOp('-')) {
      const next = this.tokens[this.at];
      // -9223372036854775808 is a literal in CEL, not the negation of an out-of-range one.
      if (next?.type === 'int' && !next.unsigned) {
        this.at += 1;
        return this.member({ kind: 'literal', value: -next.value });
      }
      return { kind: 'unary', op: '-', operand: this.unary() };
    }
    return this.member(this.primary());
  }

  private member(start: Expr): Expr {
    let expr = start;
    for (let guard = 0; guard < this.tokens.length; guard += 1) {
      if (this.takeOp('[')) {
        const index = this.expression();
        this.expect(']');
        expr = { kind: 'index', operand: expr, index };
      } else if (this.takeOp('.')) {
        const name = this.name();
        expr = this.takeOp('(') ? this.memberCall(expr, name) : { kind: 'select', operand: expr, field: name };
      } else return expr;
    }
    return expr;
  }

  private memberCall(target: Expr, name: string): Expr {
    const args = this.argumentsAfterParen();
    if (!MACROS.has(name)) return { kind: 'call', name, target, args };
    const [variable, body] = args;
    if (args.length !== 2 || variable?.kind !== 'ident' || body === undefined)
      throw new CelUnsupported(this.rule, `${name}() takes a variable and an expression`);
    return { kind: 'macro', name, target, variable: variable.name, body };
  }

  private name(): string {
    const token = this.tokens[this.at];
    if (token?.type !== 'name') throw new CelUnsupported(this.rule, 'expected a field name');
    this.at += 1;
    return token.value;
  }

  /** The arguments of a call whose "(" was just taken, through the closing ")". */
  private argumentsAfterParen(): Expr[] {
    const args: Expr[] = [];
    if (this.takeOp(')')) return args;
    for (let guard = 0; guard < this.tokens.length; guard += 1) {
      args.push(this.expression());
      if (this.takeOp(')')) return args;
      this.expect(',');
    }
    throw this.unexpected();
  }

  private primary(): Expr {
    const token = this.tokens[this.at];
    if (token === undefined) throw this.unexpected();
    this.at += 1;
    if (token.type === 'double' || token.type === 'string') return { kind: 'literal', value: token.value };
    if (token.type === 'int') return { kind: 'literal', value: token.unsigned ? { uint: token.value } : token.value };
    if (token.type === 'name') return this.named(token.value);
    if (token.value === '(') {
      const inner = this.expression();
      this.expect(')');
      return inner;
    }
    if (token.value === '[') return this.listLiteral();
    this.at -= 1;
    throw this.unexpected();
  }

  private named(name: string): Expr {
    if (name === 'true' || name === 'false') return { kind: 'literal', value: name === 'true' };
    if (name === 'null') return { kind: 'literal', value: null };
    if (!this.takeOp('(')) return { kind: 'ident', name };
    const args = this.argumentsAfterParen();
    if (name !== 'has') return { kind: 'call', name, target: undefined, args };
    const [field] = args;
    if (args.length !== 1 || field?.kind !== 'select')
      throw new CelUnsupported(this.rule, 'has() takes one field selection');
    return { kind: 'has', operand: field.operand, field: field.field };
  }

  private listLiteral(): Expr {
    const items: Expr[] = [];
    for (let guard = 0; guard <= this.tokens.length; guard += 1) {
      if (this.takeOp(']')) return { kind: 'list', items };
      items.push(this.expression());
      if (!this.takeOp(',')) {
        this.expect(']');
        return { kind: 'list', items };
      }
    }
    throw this.unexpected();
  }
}

export function parseCel(rule: string): Expr {
  return new Parser(rule, tokenize(rule)).parse();
}
