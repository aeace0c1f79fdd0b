//! The import graph of `src/`: every `crate::` path (in `use` lines and inline) must point
//! to a module of a lower layer than its own, or stay inside its own module, and the files
//! of one module must not import each other in a circle. The layers follow the data flow
//! (docs/ARCHITECTURE.md): a new top-level module must be added to [`LAYERS`] to build.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules, lowest layer first. A module may import the modules of the
/// layers before its own, never those of its own layer or later ones.
const LAYERS: &[&[&str]] = &[
    // Shared vocabulary: ids, call frames, counts of odd input, time, the error types.
    &["vocab", "time", "error"],
    // Exit codes (from the error kinds).
    &["exit"],
    // The JSON lexer and number readers.
    &["json"],
    // Paths → bytes or blocks.
    &["input"],
    // Event array → the events that matter.
    &["scan"],
    // V8 profiles rebuilt as sample / stack / frame tables.
    &["profile"],
    // Top-level and long tasks.
    &["tasks"],
    // Event Timing → interactions, their phases and INP.
    &["interactions"],
    // Each input kind → one Recording.
    &["reader"],
    // Call chains and confidence.
    &["chain"],
    // Source maps, parties.
    &["enrich"],
    // Rows and writers (CSV, JSON, Markdown, Parquet, …), text helpers.
    &["report"],
    // One file through the stages.
    &["analyze"],
    // Output files; per-file budgets.
    &["output", "gate"],
    // Many files in parallel.
    &["batch"],
    // Two sets of results compared.
    &["compare", "record"],
    // The command line.
    &["cli"],
];

/// The crate root and the binary only declare and re-export.
const EXEMPT: &[&str] = &["lib.rs", "main.rs"];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// `src/scan/records.rs` → `["scan", "records"]`; `src/scan/mod.rs` → `["scan"]`.
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" {
        parts.push(stem.to_string());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of `text` without comments (line comments, doc comments and block comments),
/// so that a doc link to a later stage is not read as an import. String literals are kept:
/// none holds `crate::`.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let (mut i, mut in_str, mut depth) = (0, false, 0);
    while i < b.len() {
        if depth > 0 {
            if b[i..].starts_with(b"*/") {
                depth -= 1;
                i += 2;
            } else if b[i..].starts_with(b"/*") {
                depth += 1;
                i += 2;
            } else {
                i += 1;
            }
            continue;
        }
        if in_str {
            if b[i] == b'\\' {
                i += 2;
                continue;
            }
            in_str = b[i] != b'"';
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        } else if b[i..].starts_with(b"/*") {
            depth = 1;
            i += 2;
            continue;
        } else if b[i] == b'"' && (i == 0 || b[i - 1] != b'\'') {
            in_str = true;
        }
        out.push(b[i] as char);
        i += 1;
    }
    out
}

/// The inline modules of `code` (`mod tests { … }`): name and byte span of each body.
/// Braces in string and character literals are not counted.
fn inline_modules(code: &str) -> Vec<(String, std::ops::Range<usize>)> {
    let b = code.as_bytes();
    let (mut open, mut found) = (Vec::new(), Vec::new());
    let (mut i, mut depth) = (0, 0usize);
    while i < b.len() {
        match b[i] {
            b'"' => {
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            // '{', '\'' and the like; a lifetime (`'a`) has no closing quote there.
            b'\'' if b.get(i + 1) == Some(&b'\\') => {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
            }
            b'\'' if b.get(i + 2) == Some(&b'\'') => i += 2,
            b'{' => {
                depth += 1;
                // `mod name {` just before this brace opens an inline module.
                let head = code[..i].trim_end();
                let name: String = head
                    .chars()
                    .rev()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                let before = head[..head.len() - name.len()].trim_end();
                if !name.is_empty() && before.ends_with("mod") {
                    let word_start = before.len() - 3;
                    let whole = before[..word_start]
                        .chars()
                        .next_back()
                        .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                    if whole {
                        open.push((name, i, depth));
                    }
                }
            }
            b'}' => {
                if open.last().is_some_and(|m| m.2 == depth) {
                    let (name, start, _) = open.pop().unwrap();
                    found.push((name, start..i));
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// The paths a file names after `crate::` or `super::`, as segments (`super` and
/// `super::super` resolved against `module` and the inline modules around the path),
/// with `{a, b::c}` groups expanded one level.
fn imported_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let inline = inline_modules(code);
    for prefix in ["crate::", "super::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            // Only whole path starts: not `my_crate::` nor `super::super::`'s second half.
            let before = code[..start].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            let mut base = Vec::new();
            if prefix == "super::" {
                // The module the path is written in: the file's, then each inline module
                // around it; each `super` goes one up.
                base = module.to_vec();
                base.extend(
                    inline
                        .iter()
                        .filter(|(_, span)| span.contains(&start))
                        .map(|(name, _)| name.clone()),
                );
                base.pop();
                while code[from..].starts_with("super::") {
                    from += "super::".len();
                    base.pop();
                }
            }
            let rest = &code[from..];
            let mut segs = base.clone();
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            segs.extend(path.split("::").filter(|s| !s.is_empty()).map(String::from));
            if rest[path.len()..].starts_with('{') && path.ends_with("::") {
                let group = &rest[path.len() + 1..rest.find('}').unwrap_or(rest.len())];
                for item in group.split(',') {
                    let first: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !first.is_empty() && first != "self" {
                        let mut s = segs.clone();
                        s.push(first);
                        paths.push(s);
                    } else if first == "self" {
                        paths.push(segs.clone());
                    }
                }
            } else {
                paths.push(segs);
            }
        }
    }
    paths
}

#[test]
fn imports_point_down_the_layers_and_never_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_path(&src, f)).collect();
    let mut problems = Vec::new();
    // File-level edges inside one top-level module, for the circle check.
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap().display().to_string();
        if EXEMPT.contains(&rel.as_str()) {
            continue;
        }
        let module = module_path(&src, file);
        let Some(own) = layer_of(&module[0]) else {
            problems.push(format!(
                "{rel}: module `{}` is in no layer of LAYERS",
                module[0]
            ));
            continue;
        };
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for path in imported_paths(&code, &module) {
            let Some(top) = path.first() else { continue };
            if top == &module[0] {
                // Inside the module: the deepest file the path names.
                let target = (1..=path.len())
                    .rev()
                    .map(|n| path[..n].to_vec())
                    .find(|p| modules.contains(p));
                if let Some(t) = target
                    && t != module
                {
                    edges.entry(module.clone()).or_default().insert(t);
                }
                continue;
            }
            match layer_of(top) {
                Some(l) if l < own => {}
                Some(_) => problems.push(format!(
                    "{rel}: imports `{}` from `{top}`, which is not in a lower layer than `{}`",
                    path.join("::"),
                    module[0]
                )),
                None if top == "*" => {}
                None => problems.push(format!(
                    "{rel}: imports `{}`: name the module it is defined in, not the crate root",
                    path.join("::")
                )),
            }
        }
    }
    // A module's facade (its mod.rs) and its own children may use each other; a circle
    // among other files of one module is an import circle.
    let facade = |a: &[String], b: &[String]| a.starts_with(b) || b.starts_with(a);
    let graph: BTreeMap<&Vec<String>, Vec<&Vec<String>>> = edges
        .iter()
        .map(|(a, bs)| (a, bs.iter().filter(|b| !facade(a, b)).collect()))
        .collect();
    let mut state: BTreeMap<&Vec<String>, u8> = BTreeMap::new();
    fn visit<'a>(
        n: &'a Vec<String>,
        graph: &BTreeMap<&'a Vec<String>, Vec<&'a Vec<String>>>,
        state: &mut BTreeMap<&'a Vec<String>, u8>,
        stack: &mut Vec<&'a Vec<String>>,
        problems: &mut Vec<String>,
    ) {
        match state.get(n) {
            Some(2) => return,
            Some(1) => {
                let at = stack.iter().position(|s| *s == n).unwrap();
                let circle: Vec<String> = stack[at..]
                    .iter()
                    .chain([&n])
                    .map(|m| m.join("::"))
                    .collect();
                problems.push(format!("import circle: {}", circle.join(" → ")));
                return;
            }
            _ => {}
        }
        state.insert(n, 1);
        stack.push(n);
        for m in graph.get(n).into_iter().flatten() {
            visit(m, graph, state, stack, problems);
        }
        stack.pop();
        state.insert(n, 2);
    }
    for n in graph.keys() {
        visit(n, &graph, &mut state, &mut Vec::new(), &mut problems);
    }
    assert!(problems.is_empty(), "\n{}\n", problems.join("\n"));
}

#[test]
fn the_checker_sees_upward_imports_groups_and_circles() {
    let m = |s: &str| s.split("::").map(String::from).collect::<Vec<_>>();
    let code = code_of(
        "use crate::report::{FileReport, text::plural};\n// use crate::cli::Cli;\n\
         /// [`crate::batch`]\nlet x = \"//\"; use super::chunk::X; f(crate::vocab::Pid(1));",
    );
    let paths = imported_paths(&code, &m("scan::records"));
    assert_eq!(
        paths,
        vec![
            m("report::FileReport"),
            m("report::text"),
            m("vocab::Pid"),
            m("scan::chunk::X"),
        ]
    );
    // `super` counts the inline modules around it: in `scan::records`'s tests, `super` is
    // `scan::records`, `super::super` is `scan` and `super::super::super::batch` the
    // crate's `batch`.
    let code = code_of(
        "use super::chunk::X;\nmod tests {\n    use super::Y;\n    let s = \"}\";\n    let c = '}';\n    \
         use super::super::X;\n    use super::super::super::batch::Config;\n}\nuse super::super::batch::Z;",
    );
    assert_eq!(
        imported_paths(&code, &m("scan::records")),
        vec![
            m("scan::chunk::X"),
            m("scan::records::Y"),
            m("scan::X"),
            m("batch::Config"),
            m("batch::Z"),
        ]
    );
    assert!(layer_of("report") > layer_of("scan"));
    assert!(layer_of("enrich") > layer_of("chain") && layer_of("enrich") < layer_of("report"));
}

/// The places in `text` that cite what a reader of the repository cannot open: notes kept
/// outside it (`FORMAT-NOTES`) or a tracker's numbers (`issue 17`); each as (line, text).
fn outside_citations(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        let issue_number = lower.match_indices("issue").any(|(at, w)| {
            let rest = lower[at + w.len()..].trim_start_matches(['s', ' ', '#']);
            rest.starts_with(|c: char| c.is_ascii_digit())
        });
        if line.contains("FORMAT-NOTES") || issue_number {
            found.push((i + 1, line.trim().to_owned()));
        }
    }
    found
}

#[test]
fn comments_cite_only_what_the_repository_holds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src",
        "tests",
        "tools",
        "benches",
        "examples",
        "fuzz/fuzz_targets",
    ] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    assert!(files.len() > 50, "{}", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (line, said) in outside_citations(&text) {
            // This file's own patterns and their test.
            if !f.ends_with("tests/layers.rs") {
                bad.push(format!("{}:{line}: {said}", f.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "cite docs/ in the repository instead:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_citation_check_sees_notes_and_issue_numbers() {
    let found = outside_citations(
        "// Field data (issue 5)\n// see FORMAT-NOTES §2\n// issues #12 and 13\n\
         // an issue with the file\n// docs/METHOD.md §2.4\n",
    );
    assert_eq!(
        found.iter().map(|(l, _)| *l).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
}
