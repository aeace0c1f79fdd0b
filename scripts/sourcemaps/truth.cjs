// Ground truth for the source-map samples, computed independently of taskchain with
// Mozilla's source-map library (greatest-lower-bound lookup, what DevTools uses) and the
// acorn parser: for every function of a bundle, the position V8 reports for it (the `(`
// of its parameters, or its lone parameter), and the original function, source, line and
// column that position maps to (1-based). The original function is the one whose head
// (its name token or keyword up to its body) holds the mapped position, else the
// innermost one whose body does; it is named as V8 names it unminified.
//
//   NODE_PATH=<scratch>/node_modules node scripts/sourcemaps/truth.cjs BUNDLE OUT.json
const fs = require('fs');
const path = require('path');
const acorn = require('acorn');
const walk = require('acorn-walk');
const { SourceMapConsumer } = require('source-map');

const [bundlePath, out] = process.argv.slice(2);
const code = fs.readFileSync(bundlePath, 'utf8');

function lineCol(text, offset) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') }; // 1-based column
}

function mapOf() {
  const m = code.match(/\/\/# sourceMappingURL=(\S+)\s*$/);
  if (!m) throw new Error('no sourceMappingURL');
  if (m[1].startsWith('data:')) {
    return JSON.parse(Buffer.from(m[1].split(',')[1], 'base64').toString('utf8'));
  }
  return JSON.parse(fs.readFileSync(path.join(path.dirname(bundlePath), m[1]), 'utf8'));
}

// Functions of a source with their heads, bodies and V8 names.
function functions(text) {
  const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'module', locations: false });
  const out = [];
  const names = new Map(); // function node -> [name, head start]
  walk.fullAncestor(ast, (node, _state, ancestors) => {
    const parent = ancestors[ancestors.length - 2];
    if (!/Function/.test(node.type)) return;
    let name = node.id ? node.id.name : null;
    let head = node.start;
    if (!name && parent) {
      if (parent.type === 'VariableDeclarator' && parent.init === node && parent.id.type === 'Identifier') {
        name = parent.id.name; head = parent.id.start;
      } else if ((parent.type === 'MethodDefinition' || parent.type === 'Property' || parent.type === 'PropertyDefinition') && parent.value === node) {
        const k = parent.key.type === 'Identifier' ? parent.key.name : String(parent.key.value);
        name = (parent.kind === 'get' || parent.kind === 'set') ? `${parent.kind} ${k}` : k;
        head = parent.key.start;
      } else if (parent.type === 'AssignmentExpression' && parent.right === node) {
        name = text.slice(parent.left.start, parent.left.end).replace(/\.prototype\./g, '.').replace(/^this\./, '');
        head = parent.left.start;
      }
    }
    out.push({ name: name || '(anonymous)', head: Math.min(head, node.start), body: node.body.start, end: node.end });
  });
  return out;
}

function enclosing(fns, offset) {
  const inner = (pred) => fns.filter(pred).sort((a, b) => (a.end - a.head) - (b.end - b.head))[0];
  const f = inner((f) => f.head <= offset && offset < f.body) || inner((f) => f.head <= offset && offset < f.end);
  return f ? f.name : null;
}

function offsetOf(text, line, column0) {
  const lines = text.split('\n');
  let off = 0;
  for (let i = 0; i < line - 1; i++) off += lines[i].length + 1;
  return off + column0; // the app's sources are ASCII: UTF-16 units = bytes
}

(async () => {
  const raw = mapOf();
  const consumer = await new SourceMapConsumer(raw);
  const sourceFns = new Map();
  const result = [];
  const ast = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'script' });
  walk.full(ast, (node) => {
    if (!/Function/.test(node.type)) return;
    // V8's function position: the `(` of the parameter list; a parenthesis-less arrow's
    // lone parameter.
    const parenless = node.type === 'ArrowFunctionExpression' && code[node.start] !== '(' && !node.async;
    const at = parenless ? node.start : code.lastIndexOf('(', node.params.length ? node.params[0].start : node.body.start);
    const gen = lineCol(code, at);
    const pos = consumer.originalPositionFor({ line: gen.line, column: gen.column - 1, bias: SourceMapConsumer.GREATEST_LOWER_BOUND });
    let original = null;
    if (pos.source) {
      const content = consumer.sourceContentFor(pos.source, true);
      if (!sourceFns.has(pos.source)) sourceFns.set(pos.source, content ? functions(content) : null);
      const fns = sourceFns.get(pos.source);
      original = {
        function: fns ? enclosing(fns, offsetOf(content, pos.line, pos.column)) : null,
        source: pos.source, line: pos.line, column: pos.column + 1,
      };
    }
    result.push({ generated: { name: node.id ? node.id.name : null, line: gen.line, column: gen.column }, original });
  });
  consumer.destroy();
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify({ bundle: path.relative(process.cwd(), bundlePath), functions: result }, null, 1) + '\n');
  console.log(out, result.length, 'functions');
})().catch((e) => { console.error(e); process.exit(1); });
