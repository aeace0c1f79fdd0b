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
/// whichever comes first), of the start of its body, and of its end.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FunctionSpan {
    head: u32,
    body: u32,
    end: u32,
    name: String,
}

/// The functions of one original source, for naming positions in it.
#[derive(Debug, Default)]
pub(crate) struct FunctionIndex {
    functions: Vec<FunctionSpan>,
    /// Byte offset of each line's start.
    line_starts: Vec<u32>,
    /// The source text (positions are converted from UTF-16 columns against it).
    text: Box<str>,
}

impl FunctionIndex {
    /// Parses `text` (named `name`, whose extension picks JS, JSX, TS or TSX; anything else
    /// is read as a JS module, then as a script if that fails). A source the parser gives
    /// up on has no functions (its frames get no original name).
    pub(crate) fn parse(name: &str, text: &str) -> FunctionIndex {
        let path_type = SourceType::from_path(strip_query(name)).ok();
        let mut functions = collect(text, path_type.unwrap_or_else(SourceType::mjs));
        if functions.is_none() && path_type.is_none() {
            functions = collect(text, SourceType::cjs());
        }
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        FunctionIndex {
            functions: functions.unwrap_or_default(),
            line_starts,
            text: text.into(),
        }
    }

    /// The byte offset of 0-based `line` and 0-based UTF-16 `column` (source-map units);
    /// `None` past the text.
    pub(crate) fn offset(&self, line: u32, column: u32) -> Option<u32> {
        let start = *self.line_starts.get(line as usize)? as usize;
        let mut units = 0u32;
        for (i, ch) in self.text[start..].char_indices() {
            if units >= column || ch == '\n' {
                return Some((start + i) as u32);
            }
            units += ch.len_utf16() as u32;
        }
        Some(self.text.len() as u32)
    }

    /// The name of the function at 0-based `line` and UTF-16 `column`: the innermost one
    /// whose head holds the position, else the innermost one whose head or body does.
    /// `None` outside every function (top-level code).
    pub(crate) fn name_at(&self, line: u32, column: u32) -> Option<&str> {
        let at = self.offset(line, column)?;
        let innermost = |f: &dyn Fn(&FunctionSpan) -> bool| {
            self.functions
                .iter()
                .filter(|s| f(s))
                .min_by_key(|s| s.end - s.head)
        };
        innermost(&|s| s.head <= at && at < s.body)
            .or_else(|| innermost(&|s| s.head <= at && at < s.end))
            .map(|s| s.name.as_str())
    }
}

fn strip_query(name: &str) -> &str {
    name.split(['?', '#']).next().unwrap_or(name)
}

/// The functions of `text`, or `None` when the parser gave up on it entirely.
fn collect(text: &str, source_type: SourceType) -> Option<Vec<FunctionSpan>> {
    let allocator = Allocator::default();
    let ret = oxc_parser::Parser::new(&allocator, text, source_type).parse();
    if ret.panicked {
        return None;
    }
    let mut c = Collect {
        src: text,
        out: Vec::new(),
        hints: Default::default(),
    };
    c.visit_program(&ret.program);
    Some(c.out)
}

/// Walks the tree; parents leave a name hint for the function that is their direct value.
struct Collect<'s> {
    src: &'s str,
    out: Vec<FunctionSpan>,
    /// Function span start → (name, head start) given by its parent.
    hints: std::collections::HashMap<u32, (String, u32)>,
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

    fn visit_method_definition(&mut self, it: &MethodDefinition<'a>) {
        let prefix = match it.kind {
            MethodDefinitionKind::Get => "get ",
            MethodDefinitionKind::Set => "set ",
            _ => "",
        };
        if let Some(name) = key_name(&it.key, prefix) {
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
        // Top-level code is in no function.
        assert_eq!(name_at(src, "setTimeout"), None);
        assert_eq!(name_at(src, "class AuditLog"), None);
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
}
