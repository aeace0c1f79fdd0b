//! Original function names: every function of an original source file, found with a real
//! JavaScript parser (oxc), named the way V8 names it when the code runs unminified.
//!
//! V8's profiler reports a function's debug name: its own name when it has one
//! (`function f`, a method `m() {}`, `get x()` → `get x`, `{ p: () => … }` → `p`, a
//! binding `const f = () => …` → `f`, `export default function` → `default`), else the
//! name V8's parser infers from an assignment (`a.b = function …` → `a.b`, with
//! `.prototype` left out: `C.prototype.m = …` → `C.m`); `(anonymous)` when none applies.

use oxc_allocator::Allocator;
use oxc_ast::ast::*;
use oxc_ast_visit::{Visit, walk};
use oxc_span::{GetSpan, SourceType};
use oxc_syntax::scope::ScopeFlags;

/// One function of a source: byte offsets of its head (from its name token or keyword,
/// whichever comes first), of the function itself (its keyword, or an arrow's parameters),
/// of the start of its body, and of its end.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FunctionSpan {
    head: u32,
    start: u32,
    body: u32,
    end: u32,
    name: String,
}

/// The functions of one original source, for naming positions in it.
#[derive(Debug, Default)]
pub(crate) struct FunctionIndex {
    /// Sorted by (head, longest first): each one's enclosing functions come before it.
    functions: Vec<FunctionSpan>,
    /// Per function: the index of the function it nests in (`u32::MAX`: none).
    parent: Vec<u32>,
    /// Byte offset of each line's start.
    line_starts: Vec<u32>,
    /// Per line: it holds only ASCII (a UTF-16 column is then its byte offset).
    ascii_lines: Vec<bool>,
    /// The source text (positions are converted from UTF-16 columns against it).
    text: Box<str>,
    /// Why the source names nothing: it could not be parsed, or nests too deep to parse.
    pub(crate) failure: Option<String>,
}

/// The stack of the thread a source is parsed on (virtual memory: only the pages a parse
/// touches are used). The parser and the walk recurse once per nesting level, a few KB per
/// level at most (tens of KB in a debug build), so [`MAX_NESTING`] levels fit many times.
const PARSE_STACK: usize = 256 << 20;

/// A source whose [`nesting_estimate`] is over this is not parsed: its frames keep no
/// original function name (real code nests a few dozen levels).
pub(crate) const MAX_NESTING: u32 = 10_000;

impl FunctionIndex {
    /// Parses `text` (named `name`, whose extension picks the syntax: `.js`, `.mjs`, `.cjs`,
    /// `.jsx`, `.ts`, `.mts`, `.cts`, `.tsx`). When that syntax does not read it without
    /// errors (or the name has no such extension: `webpack://app/src/x`), JS as a module,
    /// TypeScript, TSX and JS as a script are tried in turn, and the first clean parse is
    /// kept (else the first that did not give up). A source the parser gives up on in every
    /// syntax, or that nests deeper than [`MAX_NESTING`] ([`nesting_estimate`]), has no
    /// functions (its frames get no original name) and says why in `failure`. The parse
    /// runs on a thread of its own with a [`PARSE_STACK`] stack, so that no source can
    /// overflow the stack of the thread that asked (a stack overflow aborts the process).
    pub(crate) fn parse(name: &str, text: &str) -> FunctionIndex {
        let path_type = SourceType::from_path(strip_query(name)).ok();
        let nesting = nesting_estimate(text.as_bytes());
        let functions = if nesting > MAX_NESTING {
            Err(format!(
                "nests too deep to parse (about {nesting} levels, over the limit of {MAX_NESTING})"
            ))
        } else {
            on_parse_thread(|| {
                let tries = path_type.into_iter().chain([
                    SourceType::mjs(),
                    SourceType::ts(),
                    SourceType::tsx(),
                    SourceType::cjs(),
                ]);
                let (mut with_errors, mut gave_up) = (None, None);
                for source_type in tries {
                    match collect(text, source_type) {
                        Ok((found, true)) => return Ok(found),
                        Ok((found, false)) => {
                            with_errors.get_or_insert(found);
                        }
                        Err(e) => {
                            gave_up.get_or_insert(e);
                        }
                    }
                }
                with_errors.ok_or_else(|| gave_up.unwrap_or_default())
            })
        };
        let mut line_starts = vec![0u32];
        let mut ascii_lines = vec![true];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
                ascii_lines.push(true);
            } else if !b.is_ascii()
                && let Some(last) = ascii_lines.last_mut()
            {
                *last = false;
            }
        }
        let (mut functions, failure) = match functions {
            Ok(f) => (f, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        functions.sort_by_key(|f| (f.head, std::cmp::Reverse(f.end)));
        // The functions still open at each head, innermost last: each one's parent.
        let mut parent = Vec::with_capacity(functions.len());
        let mut open: Vec<u32> = Vec::new();
        for (i, f) in functions.iter().enumerate() {
            while open
                .last()
                .is_some_and(|&o| functions[o as usize].end <= f.head)
            {
                open.pop();
            }
            parent.push(open.last().copied().unwrap_or(u32::MAX));
            open.push(i as u32);
        }
        FunctionIndex {
            functions,
            parent,
            line_starts,
            ascii_lines,
            text: text.into(),
            failure,
        }
    }

    /// A source that names nothing, for `why` (cannot be read, too large).
    pub(crate) fn failed(why: String) -> FunctionIndex {
        FunctionIndex {
            failure: Some(why),
            ..FunctionIndex::default()
        }
    }

    /// Bytes held: the text, the functions and the line index.
    pub(crate) fn held_bytes(&self) -> usize {
        self.text.len()
            + self.line_starts.capacity() * 4
            + self.ascii_lines.capacity()
            + self.parent.capacity() * 4
            + self
                .functions
                .iter()
                .map(|f| std::mem::size_of::<FunctionSpan>() + f.name.capacity())
                .sum::<usize>()
    }

    /// The byte offset of 0-based `line` and 0-based UTF-16 `column` (source-map units);
    /// `None` past the text.
    pub(crate) fn offset(&self, line: u32, column: u32) -> Option<u32> {
        let start = *self.line_starts.get(line as usize)? as usize;
        if self.ascii_lines.get(line as usize) == Some(&true) {
            let end = self
                .line_starts
                .get(line as usize + 1)
                .map_or(self.text.len(), |&e| e as usize - 1);
            return Some(start.saturating_add(column as usize).min(end) as u32);
        }
        let mut units = 0u32;
        for (i, ch) in self.text[start..].char_indices() {
            if units >= column || ch == '\n' {
                return Some((start + i) as u32);
            }
            units += ch.len_utf16() as u32;
        }
        Some(self.text.len() as u32)
    }

    /// The name of the function at 0-based `line` and UTF-16 `column`: the function whose
    /// definition starts there (V8 reports a function's frame at its start; an IIFE's
    /// `(function () {…})()` may map to its opening parenthesis, which lies in the
    /// enclosing function), else the innermost one whose head holds the position, else the
    /// innermost one whose head or body does. `None` outside every function (top-level
    /// code). The functions that hold a position are among the enclosing ones of the last
    /// function starting at or before it: found by binary search, then walked up (as deep
    /// as the source nests).
    pub(crate) fn name_at(&self, line: u32, column: u32) -> Option<&str> {
        let at = self.offset(line, column)?;
        if let Some(s) = self.starting_at(at) {
            return Some(s.name.as_str());
        }
        let mut i = self.last_at_or_before(at)?;
        let (mut in_head, mut in_any): (Option<&FunctionSpan>, Option<&FunctionSpan>) =
            (None, None);
        let smaller = |best: Option<&FunctionSpan>, s: &FunctionSpan| {
            best.is_none_or(|b| s.end - s.head < b.end - b.head)
        };
        while let Some(s) = self.functions.get(i as usize) {
            if at < s.end {
                if at < s.body && smaller(in_head, s) {
                    in_head = Some(s);
                }
                if smaller(in_any, s) {
                    in_any = Some(s);
                }
            }
            i = self.parent[i as usize];
        }
        in_head.or(in_any).map(|s| s.name.as_str())
    }

    /// The index of the last function whose head is at or before byte offset `at`.
    fn last_at_or_before(&self, at: u32) -> Option<u32> {
        let last = self.functions.partition_point(|f| f.head <= at);
        last.checked_sub(1).map(|i| i as u32)
    }

    /// The function whose definition (its head, or the function itself) starts at byte
    /// offset `at`, or after only opening parentheses and white space from it (`(function`,
    /// `( () =>`): the nearest such start, the innermost function there.
    fn starting_at(&self, at: u32) -> Option<&FunctionSpan> {
        let rest = self.text.get(at as usize..)?;
        // At most this many parentheses and spaces are looked through (an IIFE's are few).
        const LOOK_THROUGH: usize = 64;
        for (i, c) in rest.char_indices().take(LOOK_THROUGH) {
            let pos = at + i as u32;
            // A function starting at `pos` holds it, so it is among the enclosing ones of
            // the last function whose head is at or before `pos`.
            let mut found: Option<&FunctionSpan> = None;
            let mut j = self.last_at_or_before(pos);
            while let Some(s) = j.and_then(|j| self.functions.get(j as usize)) {
                if (s.head == pos || s.start == pos)
                    && found.is_none_or(|b| s.end - s.head < b.end - b.head)
                {
                    found = Some(s);
                }
                j = j.map(|j| self.parent[j as usize]);
            }
            if found.is_some() {
                return found;
            }
            if !(c == '(' || c.is_whitespace()) {
                break;
            }
        }
        None
    }
}

/// Runs `parse` on a thread with a [`PARSE_STACK`] stack; a panic in it is an error.
fn on_parse_thread(
    parse: impl FnOnce() -> Result<Vec<FunctionSpan>, String> + Send,
) -> Result<Vec<FunctionSpan>, String> {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("taskchain-parse".into())
            .stack_size(PARSE_STACK)
            .spawn_scoped(s, parse)
            .map_err(|e| format!("could not be parsed (no thread for the parse: {e})"))?
            .join()
            .unwrap_or_else(|_| Err("could not be parsed (the parser failed)".into()))
    })
}

/// How deep a source may make the parser and the walk recurse, estimated from its bytes
/// without parsing (brackets in strings and comments count too: more, never less). Each
/// open bracket is a level, and so is, since the last `;` or `,` of its bracket, each
/// token that can nest what follows it or grow the expression before it by one node:
/// `` = ? : ! ~ < > . ` ``, a `+` or `-` in a unary place (after an operator, a bracket, `,`
/// or `;`), a closed bracket (a call, an index, a block), and the keywords of
/// [`NESTING_WORDS`] (`else if` chains, `new new`, `!!!x`, `a ? b : c ? …`, `f()()()`,
/// `a.b.c…`). Binary operators (`a + b * c || d`) are not counted: the parser reads a
/// chain of them in a loop and [`Collect`] walks it in a loop too. A line break ends the
/// count as a statement ends, unless the line ends with a counted operator or the next
/// one starts with one, with `(`, `[` or with `else`, `if`, `while`, `for`, `do`, `with`.
pub(crate) fn nesting_estimate(text: &[u8]) -> u32 {
    // Per open bracket: the levels it adds (1 + its counted tokens since `;`/`,`/line end).
    let mut levels: Vec<u32> = vec![0];
    let mut total: u32 = 0;
    let mut deepest: u32 = 0;
    // The last byte that was not a space: the line's end, at a line break.
    let mut last = b';';
    fn reset(levels: &mut [u32], total: &mut u32) {
        let base = u32::from(levels.len() > 1);
        if let Some(l) = levels.last_mut() {
            *total -= *l - base;
            *l = base;
        }
    }
    for (i, &b) in text.iter().enumerate() {
        let mut add = 0u32;
        match b {
            b'(' | b'[' | b'{' => {
                levels.push(1);
                total += 1;
            }
            b')' | b']' | b'}' if levels.len() > 1 => {
                total -= levels.pop().unwrap_or(0);
                add = 1;
            }
            b';' | b',' => reset(&mut levels, &mut total),
            b'\n' => {
                let next = text[i + 1..]
                    .iter()
                    .position(|c| !c.is_ascii_whitespace())
                    .map(|p| &text[i + 1 + p..]);
                let continues = is_nesting_operator(last)
                    || matches!(last, b'+' | b'-')
                    || next.is_some_and(|n| {
                        is_nesting_operator(n[0])
                            || matches!(n[0], b'+' | b'-' | b'(' | b'[')
                            || CONTINUING_WORDS.iter().any(|k| starts_with_word(n, k))
                    });
                if !continues {
                    reset(&mut levels, &mut total);
                }
            }
            b'+' | b'-' if is_nesting_operator(last) || b"+-([{,;".contains(&last) => add = 1,
            _ if is_nesting_operator(b) => add = 1,
            _ if b.is_ascii_alphabetic()
                && (i == 0 || !is_word_byte(text[i - 1]))
                && NESTING_WORDS
                    .iter()
                    .any(|k| starts_with_word(&text[i..], k)) =>
            {
                add = 1;
            }
            _ => {}
        }
        if add > 0 {
            if let Some(l) = levels.last_mut() {
                *l += add;
            }
            total += add;
        }
        deepest = deepest.max(total);
        if !b.is_ascii_whitespace() {
            last = b;
        }
    }
    deepest
}

/// Keywords after which an expression or statement nests in the one before.
const NESTING_WORDS: [&[u8]; 19] = [
    b"else",
    b"if",
    b"while",
    b"for",
    b"do",
    b"with",
    b"new",
    b"typeof",
    b"void",
    b"delete",
    b"await",
    b"yield",
    b"return",
    b"throw",
    b"extends",
    b"keyof",
    b"as",
    b"satisfies",
    b"infer",
];

/// Keywords that, starting a line, go on with the statement of the line before.
const CONTINUING_WORDS: [&[u8]; 6] = [b"else", b"if", b"while", b"for", b"do", b"with"];

/// An operator that nests what follows it (or, `.`, grows what is before it).
fn is_nesting_operator(b: u8) -> bool {
    matches!(
        b,
        b'=' | b'?' | b':' | b'!' | b'~' | b'<' | b'>' | b'.' | b'`'
    )
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || !b.is_ascii()
}

/// `text` starts with the whole word `word`.
fn starts_with_word(text: &[u8], word: &[u8]) -> bool {
    text.starts_with(word) && !text.get(word.len()).is_some_and(|&b| is_word_byte(b))
}

fn strip_query(name: &str) -> &str {
    name.split(['?', '#']).next().unwrap_or(name)
}

/// The functions of `text` and whether it parsed without errors, or why the parser gave
/// up on it entirely.
fn collect(text: &str, source_type: SourceType) -> Result<(Vec<FunctionSpan>, bool), String> {
    let allocator = Allocator::default();
    let ret = oxc_parser::Parser::new(&allocator, text, source_type).parse();
    if ret.panicked {
        let why = ret
            .diagnostics
            .first()
            .map_or_else(String::new, |e| format!(": {}", e.message));
        return Err(format!("could not be parsed{why}"));
    }
    let mut c = Collect {
        src: text,
        out: Vec::new(),
        hints: Default::default(),
        classes: Vec::new(),
    };
    c.visit_program(&ret.program);
    Ok((c.out, !ret.diagnostics.has_errors()))
}

/// Walks the tree; parents leave a name hint for the function that is their direct value.
struct Collect<'s> {
    src: &'s str,
    out: Vec<FunctionSpan>,
    /// Function (or class) span start → (name, head start) given by its parent.
    hints: std::collections::HashMap<u32, (String, u32)>,
    /// The names of the classes the walk is in, innermost last: a `constructor` is named
    /// by its class.
    classes: Vec<String>,
}

impl Collect<'_> {
    /// Leaves `name` (its token starting at `head`) for `value` when it is a function.
    fn hint(&mut self, value: &Expression<'_>, name: Option<String>, head: u32) {
        let Some(name) = name else { return };
        match value.without_parentheses() {
            Expression::FunctionExpression(f) => {
                self.hints.insert(f.span.start, (name, head));
            }
            Expression::ArrowFunctionExpression(f) => {
                self.hints.insert(f.span.start, (name, head));
            }
            Expression::ClassExpression(c) => {
                self.hints.insert(c.span.start, (name, head));
            }
            _ => {}
        }
    }

    fn push(&mut self, own: Option<&str>, span: Span, body: Option<Span>) {
        let hint = self.hints.remove(&span.start);
        let head = hint.as_ref().map_or(span.start, |h| h.1.min(span.start));
        let name = own
            .map(str::to_string)
            .or(hint.map(|h| h.0))
            .unwrap_or_else(|| "(anonymous)".to_string());
        self.out.push(FunctionSpan {
            head,
            start: span.start,
            body: body.map_or(span.end, |b| b.start),
            end: span.end,
            name,
        });
    }

    /// `a.b.c` for an assignment target of static names (`prototype` and a leading `this`
    /// left out, as V8's name inference does), else its last static name.
    fn target_name(&self, t: &AssignmentTarget<'_>) -> Option<String> {
        let text = self
            .src
            .get(t.span().start as usize..t.span().end as usize)?;
        let simple = !text.is_empty()
            && text
                .chars()
                .all(|c| c == '.' || c == '$' || c == '_' || c.is_alphanumeric());
        if simple {
            let parts: Vec<&str> = text
                .split('.')
                .enumerate()
                .filter(|&(i, p)| p != "prototype" && !(i == 0 && p == "this"))
                .map(|(_, p)| p)
                .collect();
            return (!parts.is_empty()).then(|| parts.join("."));
        }
        t.get_identifier_name().map(str::to_string)
    }
}

fn key_name(key: &PropertyKey<'_>, kind_prefix: &str) -> Option<String> {
    let name = match key {
        PropertyKey::PrivateIdentifier(p) => format!("#{}", p.name),
        k => k.static_name()?.into_owned(),
    };
    Some(format!("{kind_prefix}{name}"))
}

impl<'a> Visit<'a> for Collect<'_> {
    /// A chain `a + b + …` (nested in its left operand) is walked in a loop: one call per
    /// term would recurse as deep as the chain is long.
    fn visit_binary_expression(&mut self, it: &BinaryExpression<'a>) {
        let mut rights = vec![&it.right];
        let mut left = &it.left;
        while let Expression::BinaryExpression(b) = left {
            rights.push(&b.right);
            left = &b.left;
        }
        self.visit_expression(left);
        for r in rights.into_iter().rev() {
            self.visit_expression(r);
        }
    }

    /// `a && b || …`, as [`Collect::visit_binary_expression`].
    fn visit_logical_expression(&mut self, it: &LogicalExpression<'a>) {
        let mut rights = vec![&it.right];
        let mut left = &it.left;
        while let Expression::LogicalExpression(b) = left {
            rights.push(&b.right);
            left = &b.left;
        }
        self.visit_expression(left);
        for r in rights.into_iter().rev() {
            self.visit_expression(r);
        }
    }

    fn visit_function(&mut self, it: &Function<'a>, flags: ScopeFlags) {
        let own = it.id.as_ref().map(|id| id.name.as_str());
        self.push(own, it.span, it.body.as_ref().map(|b| b.span));
        walk::walk_function(self, it, flags);
    }

    fn visit_arrow_function_expression(&mut self, it: &ArrowFunctionExpression<'a>) {
        self.push(None, it.span, Some(it.body.span()));
        walk::walk_arrow_function_expression(self, it);
    }

    fn visit_variable_declarator(&mut self, it: &VariableDeclarator<'a>) {
        if let (Some(init), Some(id)) = (&it.init, it.id.get_binding_identifier()) {
            self.hint(init, Some(id.name.to_string()), id.span.start);
        }
        walk::walk_variable_declarator(self, it);
    }

    fn visit_assignment_expression(&mut self, it: &AssignmentExpression<'a>) {
        let name = self.target_name(&it.left);
        self.hint(&it.right, name, it.left.span().start);
        walk::walk_assignment_expression(self, it);
    }

    fn visit_assignment_pattern(&mut self, it: &AssignmentPattern<'a>) {
        if let Some(id) = it.left.get_binding_identifier() {
            self.hint(&it.right, Some(id.name.to_string()), id.span.start);
        }
        walk::walk_assignment_pattern(self, it);
    }

    fn visit_formal_parameter(&mut self, it: &FormalParameter<'a>) {
        if let (Some(init), Some(id)) = (&it.initializer, it.pattern.get_binding_identifier()) {
            self.hint(init, Some(id.name.to_string()), id.span.start);
        }
        walk::walk_formal_parameter(self, it);
    }

    fn visit_object_property(&mut self, it: &ObjectProperty<'a>) {
        let prefix = match it.kind {
            PropertyKind::Get => "get ",
            PropertyKind::Set => "set ",
            PropertyKind::Init => "",
        };
        self.hint(&it.value, key_name(&it.key, prefix), it.key.span().start);
        walk::walk_object_property(self, it);
    }

    /// A class is a function of its own for V8: its constructor (implicit when the class
    /// has none) and the initializer of its fields, reported under the class's name at the
    /// class's head and at its fields (a recording of a webpack + terser bundle shows
    /// `class g2{static defaults={};…;x;y;…}` as `g2` at both). Its span holds its methods,
    /// which are inner functions; its name is its own, else the one its binding, property
    /// or assignment gives it, else `default` for `export default class`.
    fn visit_class(&mut self, it: &Class<'a>) {
        let own = it.id.as_ref().map(|id| id.name.as_str());
        self.push(own, it.span, Some(it.body.span));
        let name = self.out.last().map(|f| f.name.clone()).unwrap_or_default();
        self.classes.push(name);
        walk::walk_class(self, it);
        self.classes.pop();
    }

    fn visit_method_definition(&mut self, it: &MethodDefinition<'a>) {
        let prefix = match it.kind {
            MethodDefinitionKind::Get => "get ",
            MethodDefinitionKind::Set => "set ",
            _ => "",
        };
        // V8 names a class's constructor by the class.
        let class = self
            .classes
            .last()
            .filter(|_| it.kind == MethodDefinitionKind::Constructor);
        if let Some(name) = class.cloned().or_else(|| key_name(&it.key, prefix)) {
            self.hints
                .insert(it.value.span.start, (name, it.key.span().start));
        }
        walk::walk_method_definition(self, it);
    }

    fn visit_property_definition(&mut self, it: &PropertyDefinition<'a>) {
        if let Some(v) = &it.value {
            self.hint(v, key_name(&it.key, ""), it.key.span().start);
        }
        walk::walk_property_definition(self, it);
    }

    fn visit_export_default_declaration(&mut self, it: &ExportDefaultDeclaration<'a>) {
        match &it.declaration {
            ExportDefaultDeclarationKind::FunctionDeclaration(f) if f.id.is_none() => {
                self.hints
                    .insert(f.span.start, ("default".to_string(), f.span.start));
            }
            ExportDefaultDeclarationKind::ArrowFunctionExpression(f) => {
                self.hints
                    .insert(f.span.start, ("default".to_string(), f.span.start));
            }
            ExportDefaultDeclarationKind::ClassDeclaration(c) if c.id.is_none() => {
                self.hints
                    .insert(c.span.start, ("default".to_string(), c.span.start));
            }
            _ => {}
        }
        walk::walk_export_default_declaration(self, it);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The name at the first occurrence of `marker` in `src` (a 1-line position).
    fn name_at(src: &str, marker: &str) -> Option<String> {
        let idx = FunctionIndex::parse("x.js", src);
        let at = src.find(marker).expect("marker");
        let line = src[..at].matches('\n').count() as u32;
        let col = (at - src[..at].rfind('\n').map_or(0, |n| n + 1)) as u32;
        idx.name_at(line, col).map(str::to_string)
    }

    #[test]
    fn functions_are_named_as_v8_names_them_unminified() {
        let src = "export function scoreRows(rows) { return 1; }\n\
                   export const encode = (entries, ms) => { return 2; };\n\
                   class AuditLog { flush() { return 3; } get size() { return 4; } }\n\
                   const o = { run: function () { return 5; }, go() { return 6; } };\n\
                   Foo.prototype.bar = function () { return 7; };\n\
                   this.cb = () => 8;\n\
                   const named = function inner() { return 9; };\n\
                   setTimeout(function () { return 10; });\n";
        assert_eq!(name_at(src, "scoreRows").as_deref(), Some("scoreRows"));
        assert_eq!(
            name_at(src, "function scoreRows").as_deref(),
            Some("scoreRows")
        );
        // The binding's name token and the arrow's `(` are both the arrow's head.
        assert_eq!(name_at(src, "encode").as_deref(), Some("encode"));
        assert_eq!(name_at(src, "(entries").as_deref(), Some("encode"));
        assert_eq!(name_at(src, "return 2").as_deref(), Some("encode"));
        assert_eq!(name_at(src, "flush").as_deref(), Some("flush"));
        assert_eq!(name_at(src, "size").as_deref(), Some("get size"));
        assert_eq!(name_at(src, "run").as_deref(), Some("run"));
        assert_eq!(name_at(src, "go()").as_deref(), Some("go"));
        assert_eq!(name_at(src, "return 7").as_deref(), Some("Foo.bar"));
        assert_eq!(name_at(src, "return 9").as_deref(), Some("inner"));
        assert_eq!(name_at(src, "return 10").as_deref(), Some("(anonymous)"));
        assert_eq!(name_at(src, "cb").as_deref(), Some("cb"));
        // Top-level code is in no function; a class's head is its (implicit) constructor.
        assert_eq!(name_at(src, "setTimeout"), None);
        assert_eq!(name_at(src, "class AuditLog").as_deref(), Some("AuditLog"));
    }

    #[test]
    fn constructors_and_class_fields_are_named_by_the_class() {
        // V8 reports a class's constructor, explicit or implicit, and its fields'
        // initializer under the class's name (seen in a recording of Chart.js's `class
        // Element { static defaults = {}; x; y; active = false; … }`, minified to `g2`:
        // frames `g2` at the class's head and at its fields).
        let src = "class Element {\n  static defaults = {};\n  x;\n  active = false;\n  tooltip() { return 1; }\n}\n\
                   class Chart {\n  constructor(item) { this.item = item; }\n  update() { return 2; }\n}\n\
                   const registry = { LineController: class extends Chart { draw() { return 3; } } };\n\
                   const Anon = class { constructor() { this.a = 1; } };\n\
                   export default class { run() { return 4; } }\n";
        assert_eq!(name_at(src, "class Element").as_deref(), Some("Element"));
        assert_eq!(name_at(src, "active = false").as_deref(), Some("Element"));
        assert_eq!(name_at(src, "tooltip").as_deref(), Some("tooltip"));
        assert_eq!(name_at(src, "constructor(item)").as_deref(), Some("Chart"));
        assert_eq!(name_at(src, "(item)").as_deref(), Some("Chart"));
        assert_eq!(name_at(src, "this.item").as_deref(), Some("Chart"));
        assert_eq!(name_at(src, "update").as_deref(), Some("update"));
        assert_eq!(
            name_at(src, "class extends").as_deref(),
            Some("LineController")
        );
        assert_eq!(name_at(src, "return 3").as_deref(), Some("draw"));
        assert_eq!(name_at(src, "this.a").as_deref(), Some("Anon"));
        assert_eq!(name_at(src, "class { run").as_deref(), Some("default"));
        assert_eq!(name_at(src, "return 4").as_deref(), Some("run"));
        assert_eq!(name_at(src, "registry"), None);
    }

    #[test]
    fn default_exports_class_fields_and_defaults_are_named() {
        let src = "export default function () { return 1; }\n\
                   class A { handle = () => { return 2; }; static #hidden() { return 3; } }\n\
                   function f(cb = () => 4) {}\n";
        assert_eq!(name_at(src, "return 1").as_deref(), Some("default"));
        assert_eq!(name_at(src, "return 2").as_deref(), Some("handle"));
        assert_eq!(name_at(src, "return 3").as_deref(), Some("#hidden"));
        assert_eq!(name_at(src, "() => 4").as_deref(), Some("cb"));
    }

    #[test]
    fn the_innermost_function_holds_a_position_in_nested_bodies() {
        let src = "function outer() {\n  const inner = (x) => {\n    return x;\n  };\n  return inner(1);\n}\n";
        assert_eq!(name_at(src, "return x").as_deref(), Some("inner"));
        assert_eq!(name_at(src, "return inner").as_deref(), Some("outer"));
    }

    #[test]
    fn columns_are_utf16_units() {
        // "é" is 2 bytes and 1 UTF-16 unit; "😀" 4 bytes and 2 units.
        let src = "const s = '😀é'; function f() {}\n";
        let idx = FunctionIndex::parse("x.js", src);
        let col16 = "const s = '😀é'; ".encode_utf16().count() as u32;
        assert_eq!(
            idx.offset(0, col16),
            Some(src.find("function").unwrap() as u32)
        );
        assert_eq!(idx.name_at(0, col16), Some("f"));
        assert_eq!(idx.offset(5, 0), None);
    }

    /// The name at the first occurrence of `marker` in `src`, parsed as a source named `name`.
    fn name_in(name: &str, src: &str, marker: &str) -> Option<String> {
        let idx = FunctionIndex::parse(name, src);
        let at = src.find(marker).expect("marker");
        let line = src[..at].matches('\n').count() as u32;
        let col = (at - src[..at].rfind('\n').map_or(0, |n| n + 1)) as u32;
        idx.name_at(line, col).map(str::to_string)
    }

    #[test]
    fn typescript_and_jsx_sources_are_parsed_with_their_syntax() {
        // A getter with a return type: JavaScript cannot read `(): number`, so a .ts
        // source read as JS would name nothing here (or the class's enclosing function).
        let ts = "export class Floop {\n  private n: number = 1;\n  get floop(): number {\n    return this.n as number;\n  }\n  spin<T>(x: T): T { return x; }\n}\n";
        for name in ["src/floop.ts", "webpack://app/./src/floop.mts", "floop.cts"] {
            assert_eq!(
                name_in(name, ts, "floop()").as_deref(),
                Some("get floop"),
                "{name}"
            );
            assert_eq!(
                name_in(name, ts, "return this").as_deref(),
                Some("get floop"),
                "{name}"
            );
            assert_eq!(
                name_in(name, ts, "return x").as_deref(),
                Some("spin"),
                "{name}"
            );
        }
        // No extension that says: the syntaxes are tried in turn.
        assert_eq!(
            name_in("webpack://app/src/floop", ts, "return this").as_deref(),
            Some("get floop")
        );
        let tsx =
            "const App = (p: { n: number }): JSX.Element => {\n  return <div>{p.n}</div>;\n};\n";
        assert_eq!(
            name_in("App.tsx", tsx, "return <div>").as_deref(),
            Some("App")
        );
        let jsx =
            "function Row({ cell }) {\n  return <td onClick={() => cell.go()}>{cell.v}</td>;\n}\n";
        assert_eq!(name_in("Row.jsx", jsx, "cell.v").as_deref(), Some("Row"));
        assert_eq!(
            name_in("Row.jsx", jsx, "cell.go").as_deref(),
            Some("(anonymous)")
        );
    }

    #[test]
    fn a_function_starting_at_the_position_names_it_before_the_enclosing_one() {
        let src = "function main() {\n  let x = 1;\n  (function () {\n    work();\n  })();\n  ( () => work())();\n}\n";
        // An IIFE's frame mapped to its opening parenthesis: the anonymous function, not
        // `main` (which would read as main > main, recursion).
        assert_eq!(name_at(src, "(function").as_deref(), Some("(anonymous)"));
        assert_eq!(name_at(src, "( () =>").as_deref(), Some("(anonymous)"));
        assert_eq!(name_at(src, "function ()").as_deref(), Some("(anonymous)"));
        // Inside main but at no definition's start: main.
        assert_eq!(name_at(src, "let x").as_deref(), Some("main"));
        assert_eq!(name_at(src, "main()").as_deref(), Some("main"));
        assert_eq!(name_at(src, "work();").as_deref(), Some("(anonymous)"));
    }

    #[test]
    fn a_source_that_does_not_parse_names_nothing_and_typescript_parses() {
        let idx = FunctionIndex::parse("x.js", "function ok() {}\nfunction (((");
        assert_eq!(idx.name_at(0, 10), None);
        assert_eq!(
            FunctionIndex::parse("y.ts", "let x: number = 1; function t(a: string) {}")
                .name_at(0, 28),
            Some("t")
        );
    }

    #[test]
    fn deep_or_long_sources_cost_their_names_never_the_process() {
        // 1,200 nested parentheses overflowed the stack of the thread that parsed: now
        // parsed on a thread of its own, with its functions named.
        let deep = format!(
            "function f() {{ return {}1{}; }}\n",
            "(".repeat(1200),
            ")".repeat(1200)
        );
        let idx = FunctionIndex::parse("x.js", &deep);
        assert_eq!(idx.failure, None);
        assert_eq!(idx.name_at(0, 10), Some("f"));
        // Just under the limit, the stack holds what the estimate allows (in a debug
        // build too).
        for src in [
            format!("x = {}1{};", "(".repeat(4_900), ")".repeat(4_900)),
            format!("x = {}y;", "!".repeat(9_900)),
            format!("x = {}y;", "- ".repeat(9_900)),
            format!("x = {}1;", "a ? b : ".repeat(4_900)),
            format!("x = {}1{};", "[".repeat(9_900), "]".repeat(9_900)),
        ] {
            assert!(nesting_estimate(src.as_bytes()) <= MAX_NESTING);
            let idx = FunctionIndex::parse("x.js", &src);
            assert_eq!(idx.failure, None);
        }
        // 10,000 terms of `+` (generated code): the parser loops, so does the walk.
        let long = format!(
            "function g() {{ return {}; }}\nconst h = () => 1;\n",
            (0..10_000)
                .map(|i| format!("a{i}"))
                .collect::<Vec<_>>()
                .join(" + ")
        );
        let idx = FunctionIndex::parse("x.js", &long);
        assert_eq!(idx.failure, None);
        assert_eq!(idx.name_at(0, 10), Some("g"));
        assert_eq!(idx.name_at(1, 12), Some("h"));
        // Past the limit: not parsed, and says why.
        for src in [
            format!("x = {}1{};", "(".repeat(20_000), ")".repeat(20_000)),
            format!("x = {}y;", "!".repeat(20_000)),
            format!("x = {}1;", "a ? b :\n".repeat(20_000)),
            format!("if (a) {{}}{}", " else if (a) {}\n".repeat(20_000)),
            format!("x = f{};", "()".repeat(20_000)),
        ] {
            let idx = FunctionIndex::parse("x.js", &src);
            let why = idx.failure.as_deref().unwrap_or_default();
            assert!(why.starts_with("nests too deep to parse (about "), "{why}");
            assert_eq!(idx.name_at(0, 0), None);
        }
    }

    #[test]
    fn the_nesting_estimate_counts_what_recurses_and_forgets_finished_statements() {
        assert_eq!(nesting_estimate(b"((((x))))"), 4);
        assert_eq!(nesting_estimate(b"a + b + c * d || e"), 0);
        assert_eq!(nesting_estimate(b"!!!!x"), 4);
        assert_eq!(nesting_estimate(b"!!x;\n!!x;\n!!x"), 2);
        // Statements without semicolons end at line breaks; `else` goes on.
        assert_eq!(nesting_estimate(b"a = !b\nc = !d\n"), 2);
        assert_eq!(nesting_estimate(b"a = !b\n!d\n"), 3);
        assert!(nesting_estimate(b"if (a) x\nelse if (b) y\nelse if (c) z\n") >= 5);
        // Real code stays far below the limit.
        let real = "export function scoreRows(rows) {\n  let s = 0;\n  for (const r of rows) {\n    s += r.a.b.c(1, 2) ? f(-r.x) : 0;\n  }\n  return s;\n}\n".repeat(1000);
        assert!(nesting_estimate(real.as_bytes()) < 40);
    }

    #[test]
    fn the_enclosing_function_is_found_by_search_not_by_a_scan() {
        // 100,000 functions looked up 100,000 times: a scan of every function per lookup
        // (10^10 steps) took minutes; the search takes well under a second (release).
        let n = 100_000;
        let src: String = (0..n)
            .map(|i| format!("function f{i}() {{ return {i}; }}\n"))
            .collect();
        let idx = FunctionIndex::parse("x.js", &src);
        assert_eq!(idx.functions.len(), n);
        let t = std::time::Instant::now();
        for i in (0..n as u32).rev() {
            assert_eq!(idx.name_at(i, 20), Some(format!("f{i}").as_str()));
        }
        assert!(
            t.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            t.elapsed()
        );
        // Siblings and nesting: the innermost holding the position, a sibling that ended
        // before it not.
        let src = "function a() { function b() {} x; function c() { y; } }\n";
        let idx = FunctionIndex::parse("x.js", src);
        let col = |m: &str| src.find(m).unwrap() as u32;
        assert_eq!(idx.name_at(0, col("x;")), Some("a"));
        assert_eq!(idx.name_at(0, col("y;")), Some("c"));
        assert_eq!(idx.name_at(0, col("{}")), Some("b"));
    }
}
