// Checks the names taskchain gives at production size against the original sources, with
// other code than taskchain's: for every distinct frame with an original in taskchain's
// JSON output (chains and runner-ups), the map is looked up again with
// @jridgewell/trace-mapping (greatest lower bound, as taskchain does), and the original
// function at that position is found by parsing the original source (the map's
// sourcesContent) with acorn and naming functions the way V8 names them: its own name, a
// method's or property's key (`get x` for a getter), the binding or assignment target it
// is the value of (`C.prototype.m` → `C.m`), `default` for an anonymous default export,
// else `(anonymous)`; a class's constructor and fields by the class (V8 reports them so);
// the innermost function (or class) whose head (from its key or name) or body holds the
// position. OUTPUT may also be a --speedscope file: every sampled frame with an
// original, whose name is checked against the source at its original position. Prints each
// disagreement and `N passed, N failed`; exits 1 on any.
//
//   node check.cjs MAP OUTPUT.json [OUTPUT.json...]
const fs = require('fs');
const acorn = require('acorn');
const { TraceMap, originalPositionFor, GREATEST_LOWER_BOUND } = require('@jridgewell/trace-mapping');

const [mapFile, ...outputs] = process.argv.slice(2);
if (!mapFile || !outputs.length) {
  console.error('usage: node check.cjs MAP OUTPUT.json...');
  process.exit(2);
}
const raw = JSON.parse(fs.readFileSync(mapFile, 'utf8'));
const map = new TraceMap(raw);

// Per source: its functions as [head, end, name], parsed once.
const parsed = new Map();
function functionsOf(source) {
  if (parsed.has(source)) return parsed.get(source);
  const i = raw.sources.indexOf(source);
  const text = i >= 0 ? raw.sourcesContent[i] : null;
  let found = null;
  if (text != null) {
    for (const sourceType of ['module', 'script']) {
      try {
        const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType, locations: false });
        found = { text, lines: lineStarts(text), functions: collect(ast, text) };
        break;
      } catch (e) { /* try the other */ }
    }
  }
  parsed.set(source, found);
  return found;
}

function lineStarts(text) {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

const isFunction = (n) => n && /^(FunctionDeclaration|FunctionExpression|ArrowFunctionExpression)$/.test(n.type);

function memberText(n, text) {
  if (n.type === 'Identifier') return n.name;
  // V8's name inference leaves out `this` (and `prototype`): `this.a.b = …` is `a.b`.
  if (n.type === 'ThisExpression') return '';
  if (n.type === 'MemberExpression' && !n.computed) {
    const object = memberText(n.object, text);
    if (object == null) return null;
    if (n.property.name === 'prototype') return object;
    return object ? `${object}.${n.property.name}` : n.property.name;
  }
  if (n.type === 'MemberExpression' && n.property.type === 'Literal') {
    const object = memberText(n.object, text);
    if (object == null) return null;
    return object ? `${object}.${n.property.value}` : String(n.property.value);
  }
  return null;
}

function keyName(key, computed) {
  if (computed) return null;
  if (key.type === 'Identifier') return key.name;
  if (key.type === 'PrivateIdentifier') return `#${key.name}`;
  if (key.type === 'Literal') return String(key.value);
  return null;
}

// The name V8 gives the function or class `node` from its parent when it has none of its
// own: a binding, a property's or field's key, an assignment target, a parameter's default,
// `default` for an anonymous default export.
function givenName(node, parent, text) {
  if (!parent) return null;
  if (parent.type === 'VariableDeclarator' && parent.init === node && parent.id.type === 'Identifier') return parent.id.name;
  if ((parent.type === 'Property' || parent.type === 'PropertyDefinition') && parent.value === node) return keyName(parent.key, parent.computed);
  if (parent.type === 'AssignmentExpression' && parent.right === node) return memberText(parent.left, text);
  if (parent.type === 'AssignmentPattern' && parent.right === node && parent.left.type === 'Identifier') return parent.left.name;
  if (parent.type === 'ExportDefaultDeclaration') return 'default';
  return null;
}

// Every function of `ast` as [head, end, name]: walks the tree keeping each node's parent.
// A class counts as a function, named by the class: V8 reports its constructor (implicit
// or not) and its fields' initializer under the class's name.
function collect(ast, text) {
  const out = [];
  const classes = [];
  const visit = (node, parent) => {
    let isClass = false;
    if (/^Class(Declaration|Expression)$/.test(node.type)) {
      const name = (node.id && node.id.name) || givenName(node, parent, text) || '(anonymous)';
      const head = parent && parent.type === 'Property' && parent.value === node ? parent.start : node.start;
      out.push([head, node.end, name]);
      classes.push(name);
      isClass = true;
    } else if (isFunction(node)) {
      let name = node.id ? node.id.name : null;
      let head = node.start;
      if (parent && parent.type === 'MethodDefinition' && parent.value === node) {
        const k = keyName(parent.key, parent.computed);
        if (parent.kind === 'constructor') name = classes[classes.length - 1];
        else if (k != null) name = parent.kind === 'get' || parent.kind === 'set' ? `${parent.kind} ${k}` : k;
        head = Math.min(head, parent.start);
      } else if (parent && parent.type === 'Property' && parent.value === node) {
        const k = keyName(parent.key, parent.computed);
        if (k != null) name = parent.kind === 'get' || parent.kind === 'set' ? `${parent.kind} ${k}` : (name && !parent.method ? name : k);
        head = Math.min(head, parent.start);
      } else if (!name) {
        name = givenName(node, parent, text);
      }
      out.push([head, node.end, name || '(anonymous)']);
    }
    for (const key of Object.keys(node)) {
      const v = node[key];
      if (Array.isArray(v)) v.forEach((c) => c && typeof c.type === 'string' && visit(c, node));
      else if (v && typeof v.type === 'string') visit(v, node);
    }
    if (isClass) classes.pop();
  };
  visit(ast, null);
  return out;
}

// The innermost function whose head or body holds byte `at` (UTF-16 units: JS strings).
function nameAt(fns, at) {
  let best = null;
  for (const f of fns) if (f[0] <= at && at < f[1] && (!best || f[1] - f[0] < best[1] - best[0])) best = f;
  return best ? best[2] : null;
}

let passed = 0;
let failed = 0;
const seen = new Set();
const sources = new Set(raw.sources);
for (const file of outputs) {
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (report.shared) {
    // A --speedscope file: every sampled frame with an original is named by it, at its
    // original position (no generated position to look up again).
    for (const f of report.shared.frames) {
      if (!sources.has(f.file)) continue;
      const key = JSON.stringify(f);
      if (seen.has(key)) continue;
      seen.add(key);
      const src = functionsOf(f.file);
      const at = src && src.lines[f.line - 1] + f.col - 1;
      const want = src ? nameAt(src.functions, at) : null;
      if (src && (want || '(anonymous)') === f.name) {
        passed++;
      } else {
        failed++;
        console.log(`FAIL speedscope frame ${f.name} ${f.file}:${f.line}:${f.col}: the source says ${want} (${src && JSON.stringify(src.text.slice(at, at + 40))})`);
      }
    }
    continue;
  }
  for (const task of report.tasks) {
    const frames = [...task.chain, ...(task.alternatives || []).flatMap((a) => a.chain)];
    for (const f of frames) {
      if (!f.original_source || !f.url || !f.url.endsWith('app.min.js')) continue;
      const key = JSON.stringify(f);
      if (seen.has(key)) continue;
      seen.add(key);
      const problems = [];
      const o = originalPositionFor(map, { line: f.line, column: f.column - 1, bias: GREATEST_LOWER_BOUND });
      // trace-mapping resolves source names as URLs (`./` dropped): compare as written.
      const source = raw.sources[map.resolvedSources.indexOf(o.source)];
      if (source !== f.original_source || o.line !== f.original_line || o.column + 1 !== f.original_column) {
        problems.push(`mapping: trace-mapping says ${source}:${o.line}:${o.column + 1}`);
      }
      const src = functionsOf(f.original_source);
      if (src) {
        const at = src.lines[f.original_line - 1] + f.original_column - 1;
        const want = nameAt(src.functions, at);
        if ((want || null) !== (f.original_function || null)) {
          problems.push(`name: the source says ${want} (${JSON.stringify(src.text.slice(at, at + 40))})`);
        }
      } else if (f.original_function) {
        problems.push('name: the source cannot be parsed by acorn, taskchain named it');
      }
      if (problems.length) {
        failed++;
        console.log(`FAIL ${f.function} ${f.line}:${f.column} -> ${f.original_function} ${f.original_source}:${f.original_line}:${f.original_column}: ${problems.join('; ')}`);
      } else {
        passed++;
      }
    }
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
