// A function-length rule for every file, tests included: a function may span at most `max`
// lines (blank lines and comments count, as in core max-lines-per-function). A callback given to
// `describe` is exempt: it groups tests and is not a function anyone reads as a unit; the tests
// and helpers inside it are held to the limit.
const GROUPING = new Set(['describe', 'suite']);

/** `describe(…)`, `describe.each(…)(…)`, `describe.skip(…)`, `describe.concurrent(…)`, … */
function isGroupingCall(node) {
  if (node?.type !== 'CallExpression') return false;
  let callee = node.callee;
  while (callee.type === 'CallExpression' || callee.type === 'MemberExpression')
    callee = callee.type === 'CallExpression' ? callee.callee : callee.object;
  return callee.type === 'Identifier' && GROUPING.has(callee.name);
}

export const maxFunctionLines = {
  meta: {
    type: 'suggestion',
    docs: { description: 'Limit a function to a number of lines; describe callbacks are exempt' },
    schema: [{ type: 'object', properties: { max: { type: 'integer', minimum: 1 } }, additionalProperties: false }],
    messages: { tooLong: '{{name}} has too many lines ({{lines}}). Maximum allowed is {{max}}.' },
  },
  create(context) {
    const max = context.options[0]?.max ?? 70;
    const check = (node) => {
      if (isGroupingCall(node.parent) && node.parent.arguments.includes(node)) return;
      // An immediately invoked function is a block, as core max-lines-per-function treats it.
      if (node.parent?.type === 'CallExpression' && node.parent.callee === node) return;
      const lines = node.loc.end.line - node.loc.start.line + 1;
      if (lines <= max) return;
      const name = node.id?.name ?? (node.parent?.type === 'MethodDefinition' ? node.parent.key.name : null);
      context.report({
        node,
        messageId: 'tooLong',
        data: { name: name === null || name === undefined ? 'A function' : `Function '${name}'`, lines, max },
      });
    };
    return { FunctionDeclaration: check, FunctionExpression: check, ArrowFunctionExpression: check };
  },
};

export const localRules = { rules: { 'max-function-lines': maxFunctionLines } };
